// Runs bulk jobs: one article at a time per job, each paced through the
// project's writes bucket, each outcome recorded before the next article (so
// a restart repeats at most the article in hand). A job is held through a
// lease its runner renews; a runner that stops (a crash, a deploy) leaves the
// lease to lapse, and whichever articles process looks next takes the job over
// where it was: exactly one process runs a job at a time.
import { randomBytes } from "node:crypto";
import type { Logger } from "../../../lib/log.js";
import { pause, type WritePacer } from "../../../lib/ratelimit/write-pacer.js";
import type { BulkAct } from "./actions.js";
import type { BulkJob, JobStore } from "./port.js";

export interface JobRunnerOptions {
  store: JobStore;
  act: BulkAct;
  /** Waits for the project's next write; absent: unpaced (rate limits off). */
  pace?: WritePacer;
  log: Logger;
  /** How long a runner holds a job without renewing; default 15 s. */
  leaseMs?: number;
  /** How often lapsed jobs are looked for; default 5 s. */
  scanMs?: number;
  /** A failing store: how long before the same article is tried again, and how often; defaults 2 s, 5 times. */
  retryMs?: number;
  retries?: number;
}

export interface JobRunner {
  /** Who holds the jobs this runner runs. */
  readonly owner: string;
  leaseUntil(now?: number): number;
  /** Runs a job this runner just created (held by it). */
  run(job: BulkJob): void;
  close(): Promise<void>;
}

export function startJobRunner(opts: JobRunnerOptions): JobRunner {
  const owner = `${process.pid}.${randomBytes(6).toString("base64url")}`;
  const leaseMs = opts.leaseMs ?? 15_000;
  const retryMs = opts.retryMs ?? 2_000;
  const retries = opts.retries ?? 5;
  const leaseUntil = (now = Date.now()) => now + leaseMs;
  const active = new Map<string, { abort: AbortController; done: Promise<void> }>();
  let closed = false;

  async function loop(first: BulkJob, abort: AbortController): Promise<void> {
    const { signal } = abort;
    let job: BulkJob | null = first;
    // The lease is renewed while a paced wait lasts longer than a third of it; a renewal that fails (cancelled, taken over) stops the job.
    const heartbeat = setInterval(() => {
      opts.store.step(first.id, owner, undefined, leaseUntil()).then(
        (j) => j ?? abort.abort(),
        (err: unknown) => opts.log.warn({ err, jobId: first.id }, "bulk job lease renewal failed"),
      );
    }, Math.max(100, Math.floor(leaseMs / 3)));
    heartbeat.unref();
    try {
      while (job && !signal.aborted) {
        const position = job.done + job.failed;
        if (position >= job.total) {
          await opts.store.finish(job.id, owner, "done", undefined);
          opts.log.info({ jobId: job.id, projectId: job.projectId, action: job.action, done: job.done, failed: job.failed }, "bulk job done");
          return;
        }
        const ids = await opts.store.targets(job.id, position, 50);
        if (ids.length === 0) {
          await opts.store.finish(job.id, owner, "failed", "the job's list of articles is incomplete");
          return;
        }
        for (const id of ids) {
          if (opts.pace) await opts.pace(job.projectId, signal);
          if (signal.aborted) return;
          const outcome = await actWithRetries(job, id, signal);
          if (!outcome) return;
          job = await opts.store.step(job.id, owner, outcome.ok ? { ok: true } : { ok: false, error: { articleId: id, error: outcome.error } }, leaseUntil());
          if (!job) return;
          if (!outcome.ok && outcome.stop) {
            const remaining = job.total - job.done - job.failed;
            await opts.store.finish(job.id, owner, "failed", `${outcome.stop}; ${remaining} article${remaining === 1 ? "" : "s"} left untouched`);
            opts.log.info({ jobId: job.id, projectId: job.projectId, reason: outcome.stop }, "bulk job stopped");
            return;
          }
        }
      }
    } catch (err) {
      // An abort while pacing (close, cancel) is not a failure.
      if (!signal.aborted) opts.log.error({ err, jobId: first.id }, "bulk job runner failed; the job is taken over once its lease lapses");
    } finally {
      clearInterval(heartbeat);
    }
  }

  /** The article's outcome; undefined when the job should stop here (aborted, or the store kept failing and the job was ended). */
  async function actWithRetries(job: BulkJob, id: string, signal: AbortSignal) {
    for (let attempt = 0; ; attempt++) {
      try {
        return await opts.act(job, id);
      } catch (err) {
        if (attempt >= retries) {
          opts.log.error({ err, jobId: job.id, articleId: id }, "bulk job failed: the article kept failing");
          await opts.store.finish(job.id, owner, "failed", `stopped: a service the job needs kept failing at article '${id}'; retry later`).catch(() => {});
          return undefined;
        }
        opts.log.warn({ err, jobId: job.id, articleId: id, attempt }, "bulk job article failed; retrying");
        await pause(retryMs * (attempt + 1), signal);
        if (signal.aborted) return undefined;
      }
    }
  }

  function run(job: BulkJob): void {
    if (closed || active.has(job.id)) return;
    const abort = new AbortController();
    const done = loop(job, abort).finally(() => active.delete(job.id));
    active.set(job.id, { abort, done });
  }

  async function scan(): Promise<void> {
    const now = Date.now();
    for (const lapsed of await opts.store.lapsed(now, 20)) {
      if (closed || active.has(lapsed.id)) continue;
      const job = await opts.store.claim(lapsed.id, owner, leaseUntil(), now);
      if (job) {
        opts.log.info({ jobId: job.id, projectId: job.projectId, position: job.done + job.failed, total: job.total }, "bulk job taken over");
        run(job);
      }
    }
  }

  const scanning = setInterval(() => void scan().catch((err: unknown) => opts.log.warn({ err }, "bulk job scan failed")), opts.scanMs ?? 5_000);
  scanning.unref();
  // Jobs a previous process left: released at its shutdown (taken now) or lapsing soon.
  void scan().catch((err: unknown) => opts.log.warn({ err }, "bulk job scan failed"));

  return {
    owner,
    leaseUntil,
    run,
    async close() {
      closed = true;
      clearInterval(scanning);
      const running = [...active.entries()];
      for (const [, r] of running) r.abort.abort();
      await Promise.all(running.map(([, r]) => r.done));
      // Handed over at once: the next process resumes without waiting for the lease to lapse.
      await Promise.all(running.map(([id]) => opts.store.release(id, owner).catch(() => {})));
    },
  };
}
