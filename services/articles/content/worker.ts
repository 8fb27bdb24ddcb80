// Content worker thread entry: serves analyse/extract jobs one at a time. A job
// that runs too long or too deep is ended from outside (pool.ts terminates the
// thread); everything it can notice itself is answered as a rejection.
import { parentPort, workerData } from "node:worker_threads";
import { analyse, extractLimited, type Limits } from "./analyse.js";
import { ContentRejectedError } from "./limits.js";
import type { ContentJob, ContentReply } from "./protocol.js";

const port = parentPort!;
const limits = workerData as Limits;

port.on("message", (job: ContentJob) => {
  let reply: ContentReply;
  try {
    reply =
      job.kind === "analyse"
        ? { id: job.id, ok: true, analysis: analyse(job.input, limits) }
        : { id: job.id, ok: true, text: extractLimited(job.html, job.url, limits) };
  } catch (err) {
    // RangeError (call stack) and the extractors' own failures are verdicts on this input too.
    const reason = err instanceof ContentRejectedError ? err.reason : `content extraction failed: ${err instanceof Error ? err.message : String(err)}`;
    reply = { id: job.id, ok: false, reason };
  }
  port.postMessage(reply);
});
port.postMessage({ ready: true } satisfies ContentReply);
