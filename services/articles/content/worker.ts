// Content worker thread entry: serves analyse/extract jobs one at a time. A job
// that runs too long or too deep is ended from outside (lib/threads/pool.ts
// terminates the thread); everything it can notice itself is answered as a rejection.
import { workerData } from "node:worker_threads";
import { serveJobs } from "../../../lib/threads/serve.js";
import { analyse, extractLimited, extractPageLimited, type Limits } from "./analyse.js";
import { ContentRejectedError } from "./limits.js";
import type { ContentJob, ContentResult } from "./protocol.js";
import { FeedParseError, parseFeed } from "../sources/parse-feed.js";

const limits = workerData as Limits;

serveJobs<ContentJob, ContentResult>(
  (job) => {
    if (job.kind === "analyse") return { analysis: analyse(job.input, limits) };
    if (job.kind === "page") return { page: extractPageLimited(job.html, job.url, limits) };
    if (job.kind === "feed") return { feed: parseFeed(job.body, job.feedKind, { maxItems: job.maxItems, baseUrl: job.url }) };
    return { text: extractLimited(job.html, job.url, limits) };
  },
  // RangeError (call stack) and the extractors' own failures are verdicts on this input too.
  (err) => (err instanceof ContentRejectedError ? err.reason : err instanceof FeedParseError ? err.message : `content extraction failed: ${err instanceof Error ? err.message : String(err)}`),
);
