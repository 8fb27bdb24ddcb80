// Content work (HTML extraction, classification) runs here, in a small pool
// of worker threads, never on the service's event loop: one hostile page must
// not stall every other project's reads. Each job gets a hard time limit (the
// thread is terminated when it is exceeded) and a heap limit; waiting jobs are
// taken from the projects in turn, so one project's flood of pages does not
// hold up another project's next article for more than one job per thread.
import { Worker } from "node:worker_threads";
import { workerEntry } from "../../../lib/threads/worker-entry.js";
import type { AnalyseInput, Analysis } from "./analyse.js";
import { explainContent } from "./classify.js";
import { CONTENT_LIMITS, ContentBusyError, ContentRejectedError, memoryReason, timeoutReason, type ContentLimits } from "./limits.js";
import type { ContentJob, ContentReply } from "./protocol.js";

export interface ContentWork {
  /** What will be spoken and its content-type scores. Throws ContentRejectedError (final) or ContentBusyError (retry later). */
  analyse(projectId: string, input: AnalyseInput): Promise<Analysis>;
  /** The main text of a fetched page (recrawl). */
  extract(projectId: string, html: string, url?: string): Promise<string>;
  /** Starts the threads now, so the first article does not pay for it (a service calls this at start). */
  warm(): void;
  close(): Promise<void>;
}

type Message = { kind: "analyse"; input: AnalyseInput } | { kind: "extract"; html: string; url?: string };

interface Job {
  id: number;
  message: Message;
  resolve: (reply: ContentReply & { ok: true }) => void;
  reject: (err: Error) => void;
}

interface Slot {
  worker: Worker;
  job?: Job;
  timer?: NodeJS.Timeout;
}

export function createContentPool(overrides: Partial<ContentLimits> = {}): ContentWork {
  const limits: ContentLimits = { ...CONTENT_LIMITS, ...overrides };
  const slots: Slot[] = [];
  let starting = 0;
  // One FIFO per project, served in turn.
  const queues = new Map<string, Job[]>();
  let queued = 0;
  let nextId = 1;
  let closed = false;

  function take(): Job | undefined {
    for (const [project, jobs] of queues) {
      const job = jobs.shift();
      queues.delete(project);
      // Re-inserted at the end: the next job comes from the next project.
      if (jobs.length) queues.set(project, jobs);
      if (job) {
        queued--;
        return job;
      }
    }
    return undefined;
  }

  function dispatch(): void {
    for (const slot of slots) {
      if (slot.job) continue;
      const job = take();
      if (!job) return;
      run(slot, job);
    }
    if (queued > starting && slots.length + starting < limits.threads) spawn();
  }

  function run(slot: Slot, job: Job): void {
    slot.job = job;
    slot.worker.ref();
    slot.timer = setTimeout(() => fail(slot, new ContentRejectedError(timeoutReason(limits.timeoutMs))), limits.timeoutMs);
    slot.worker.postMessage({ id: job.id, ...job.message } as ContentJob);
  }

  function finish(slot: Slot): Job | undefined {
    const job = slot.job;
    clearTimeout(slot.timer);
    slot.job = undefined;
    slot.timer = undefined;
    slot.worker.unref();
    return job;
  }

  /** The job's thread is ended: its heap may be poisoned or it may still be spinning. */
  function fail(slot: Slot, err: Error): void {
    const index = slots.indexOf(slot);
    if (index < 0) return;
    slots.splice(index, 1);
    const job = finish(slot);
    void slot.worker.terminate();
    job?.reject(err);
    if (!closed) dispatch();
  }

  function spawn(): void {
    starting++;
    start(limits).then(
      (worker) => {
        starting--;
        if (closed) {
          void worker.terminate();
          return;
        }
        const slot: Slot = { worker };
        worker.on("message", (reply: ContentReply) => {
          if (!("id" in reply) || slot.job?.id !== reply.id) return;
          const job = finish(slot)!;
          if (reply.ok) job.resolve(reply);
          else job.reject(new ContentRejectedError(reply.reason));
          dispatch();
        });
        worker.on("error", (err: Error & { code?: string }) => {
          const reason = err.code === "ERR_WORKER_OUT_OF_MEMORY" ? memoryReason(limits.maxHeapMb) : `content extraction failed: ${err.message}`;
          fail(slot, slot.job ? new ContentRejectedError(reason) : err);
        });
        worker.on("exit", (code) => fail(slot, new ContentRejectedError(`content extraction failed: its thread exited with code ${code}`)));
        worker.unref();
        slots.push(slot);
        dispatch();
      },
      (err: Error) => {
        starting--;
        // Without any thread the queue would wait forever: it is told to come back later instead.
        if (slots.length === 0 && starting === 0) {
          for (let job = take(); job; job = take()) job.reject(new ContentBusyError(`content workers could not start: ${err.message}`));
        }
      },
    );
  }

  function submit(projectId: string, message: Message): Promise<ContentReply & { ok: true }> {
    if (closed) return Promise.reject(new ContentBusyError("the content pool is closed"));
    if (queued >= limits.maxQueued) return Promise.reject(new ContentBusyError(`${queued} content jobs are already waiting`));
    return new Promise((resolve, reject) => {
      const job: Job = { id: nextId++, message, resolve, reject };
      const list = queues.get(projectId);
      if (list) list.push(job);
      else queues.set(projectId, [job]);
      queued++;
      dispatch();
    });
  }

  return {
    async analyse(projectId, input) {
      // Plain text this short is classified faster than it can be handed to a thread and
      // back (~250 µs of this thread's CPU per round trip); its cost is bounded by its size.
      const spoken = input.crawledText ?? (input.parse ? undefined : input.text);
      if (spoken !== undefined && spoken.length + input.title.length <= limits.inlineChars) {
        return { spoken, scores: explainContent({ title: input.title, text: spoken, lang: input.lang }) };
      }
      return ((await submit(projectId, { kind: "analyse", input })) as { analysis: Analysis }).analysis;
    },
    async extract(projectId, html, url) {
      return ((await submit(projectId, { kind: "extract", html, url })) as { text: string }).text;
    },
    warm() {
      while (!closed && slots.length + starting < limits.threads) spawn();
    },
    async close() {
      closed = true;
      for (let job = take(); job; job = take()) job.reject(new ContentBusyError("the content pool is closed"));
      const all = slots.splice(0);
      for (const slot of all) finish(slot)?.reject(new ContentBusyError("the content pool is closed"));
      await Promise.all(all.map((s) => s.worker.terminate()));
    },
  };
}

async function start(limits: ContentLimits): Promise<Worker> {
  const entry = await workerEntry(new URL("./worker.ts", import.meta.url));
  const worker = new Worker(entry, {
    workerData: { maxDepth: limits.maxDepth, maxOutputChars: limits.maxOutputChars },
    resourceLimits: { maxOldGenerationSizeMb: limits.maxHeapMb, maxYoungGenerationSizeMb: 8 },
  });
  return new Promise<Worker>((resolve, reject) => {
    const cleanup = () => {
      worker.off("message", onMessage);
      worker.off("error", onError);
      worker.off("exit", onExit);
    };
    const onMessage = (reply: ContentReply) => {
      if (!("ready" in reply)) return;
      cleanup();
      resolve(worker);
    };
    const onError = (err: Error) => {
      cleanup();
      void worker.terminate();
      reject(err);
    };
    const onExit = (code: number) => {
      cleanup();
      reject(new Error(`exited with code ${code} during start-up`));
    };
    worker.on("message", onMessage);
    worker.on("error", onError);
    worker.on("exit", onExit);
  });
}
