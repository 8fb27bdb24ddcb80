// Text worker thread entry (work.ts): prepares an article's text or plans its
// chunks, one job at a time; a job past its deadline is ended from outside.
import { serveJobs } from "../../../lib/threads/serve.js";
import { planChunks } from "./chunks.js";
import { prepareSentences } from "./index.js";
import { transcriptTexts } from "../../../lib/transcripts.js";
import type { TextJob, TextResult } from "./work.js";

serveJobs<TextJob, TextResult>(
  (job) =>
    job.kind === "prepare"
      ? { paragraphs: prepareSentences(job.input) }
      : job.kind === "plan"
        ? { chunks: planChunks(job.paragraphs, job.lang, job.maxChars, job.opts) }
        : { files: transcriptTexts(job.segments) },
  (err) => `text preparation failed: ${err instanceof Error ? err.message : String(err)}`,
);
