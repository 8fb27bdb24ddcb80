// The worker-thread side of a thread pool (pool.ts): serves one job at a
// time. A job that runs too long or needs too much memory is ended from
// outside; everything the thread can notice itself is answered as a rejection.
import { parentPort } from "node:worker_threads";
import type { PoolJob, PoolReply } from "./pool.js";

/** `reason` turns a job's error into the rejection's text (a verdict on that input). */
export function serveJobs<M extends object, R extends object>(handle: (job: M) => R, reason: (err: unknown) => string): void {
  const port = parentPort!;
  port.on("message", (job: PoolJob<M>) => {
    let reply: PoolReply<R>;
    try {
      reply = { ...handle(job), id: job.id, ok: true };
    } catch (err) {
      reply = { id: job.id, ok: false, reason: reason(err) };
    }
    port.postMessage(reply);
  });
  port.postMessage({ ready: true } satisfies PoolReply<R>);
}
