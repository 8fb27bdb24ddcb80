// A small pool of worker threads for work whose cost depends on what a
// tenant sent (content extraction, text preparation): it never runs on a
// service's event loop, so one hostile input cannot stall every other
// project's requests. Each job gets a hard time limit (its thread is
// terminated when it is exceeded) and a heap limit; waiting jobs are taken
// from the projects in turn, so one project's flood does not hold up another
// project's next job for more than one job per thread. Threads start when
// work arrives and, with idleMs, stop when none came for that long: each
// holds a V8 heap of its own (~35 MB for the content work), which an idle
// process need not keep. The worker side of the protocol is serveJobs()
// (serve.ts).
import { Worker } from "node:worker_threads";
import { workerEntry } from "./worker-entry.js";

export interface ThreadPoolLimits {
  /** Wall-clock time of one job. */
  timeoutMs: number;
  /** Heap of one worker thread. */
  maxHeapMb: number;
  /** Worker threads. */
  threads: number;
  /** Jobs waiting for a thread, over all projects; more are refused until the queue drains. */
  maxQueued: number;
  /** A thread without a job for this long is stopped (the next job starts one again); unset: threads stay. */
  idleMs?: number;
}

export interface ThreadPoolOptions extends ThreadPoolLimits {
  /** The worker module next to its caller, e.g. new URL("./worker.ts", import.meta.url). */
  entry: URL;
  workerData?: unknown;
  /** What the work is called in messages: "content extraction", "text preparation". */
  work: string;
  /** What one job is called in messages: "content jobs are already waiting". */
  jobs: string;
  /** A verdict on the job's input (too slow, too big, made its thread fail): final. */
  rejected(reason: string): Error;
  /** No verdict: the pool is saturated, closed or has no thread; try again later. */
  busy(message: string): Error;
}

export interface ThreadPool<M extends object, R extends object> {
  /** Runs `message` on a thread; `project` decides the turn it waits for. */
  run(project: string, message: M): Promise<R>;
  /** Gets the threads' code ready now (bundling it from TypeScript sources), so the first job pays only for starting its thread. */
  prepare(): void;
  close(): Promise<void>;
}

/** Messages between a pool and its threads. */
export type PoolJob<M> = M & { id: number };
export type PoolReply<R> = { ready: true } | ({ id: number; ok: true } & R) | { id: number; ok: false; reason: string };

const seconds = (ms: number) => (ms >= 1000 && ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`);
export const timeoutReason = (work: string, ms: number) => `${work} took longer than ${seconds(ms)}`;
export const memoryReason = (work: string, mb: number) => `${work} needed more than ${mb} MB of memory`;

interface Job<M, R> {
  id: number;
  message: M;
  resolve: (reply: R) => void;
  reject: (err: Error) => void;
}

interface Slot<M, R> {
  worker: Worker;
  job?: Job<M, R>;
  timer?: NodeJS.Timeout;
  idle?: NodeJS.Timeout;
}

export function createThreadPool<M extends object, R extends object>(opts: ThreadPoolOptions): ThreadPool<M, R> {
  const slots: Array<Slot<M, R>> = [];
  let starting = 0;
  // One FIFO per project, served in turn.
  const queues = new Map<string, Array<Job<M, R>>>();
  let queued = 0;
  let nextId = 1;
  let closed = false;

  function take(): Job<M, R> | undefined {
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
      if (!job) break;
      run(slot, job);
    }
    if (queued > starting && slots.length + starting < opts.threads) spawn();
    if (opts.idleMs !== undefined) for (const slot of slots) if (!slot.job && !slot.idle) slot.idle = setTimeout(() => retire(slot), opts.idleMs).unref();
  }

  function retire(slot: Slot<M, R>): void {
    slot.idle = undefined;
    const index = slots.indexOf(slot);
    if (index < 0 || slot.job) return;
    slots.splice(index, 1);
    void slot.worker.terminate();
  }

  function run(slot: Slot<M, R>, job: Job<M, R>): void {
    clearTimeout(slot.idle);
    slot.idle = undefined;
    slot.job = job;
    slot.worker.ref();
    slot.timer = setTimeout(() => fail(slot, opts.rejected(timeoutReason(opts.work, opts.timeoutMs))), opts.timeoutMs);
    slot.worker.postMessage({ ...job.message, id: job.id } as PoolJob<M>);
  }

  function finish(slot: Slot<M, R>): Job<M, R> | undefined {
    const job = slot.job;
    clearTimeout(slot.timer);
    slot.job = undefined;
    slot.timer = undefined;
    slot.worker.unref();
    return job;
  }

  /** The job's thread is ended: its heap may be poisoned or it may still be spinning. */
  function fail(slot: Slot<M, R>, err: Error): void {
    const index = slots.indexOf(slot);
    if (index < 0) return;
    slots.splice(index, 1);
    clearTimeout(slot.idle);
    const job = finish(slot);
    void slot.worker.terminate();
    job?.reject(err);
    if (!closed) dispatch();
  }

  function spawn(): void {
    starting++;
    start(opts).then(
      (worker) => {
        starting--;
        if (closed) {
          void worker.terminate();
          return;
        }
        const slot: Slot<M, R> = { worker };
        worker.on("message", (reply: PoolReply<R>) => {
          if (!("id" in reply) || slot.job?.id !== reply.id) return;
          const job = finish(slot)!;
          if (reply.ok) job.resolve(reply as R);
          else job.reject(opts.rejected(reply.reason));
          dispatch();
        });
        worker.on("error", (err: Error & { code?: string }) => {
          const reason = err.code === "ERR_WORKER_OUT_OF_MEMORY" ? memoryReason(opts.work, opts.maxHeapMb) : `${opts.work} failed: ${err.message}`;
          fail(slot, slot.job ? opts.rejected(reason) : err);
        });
        worker.on("exit", (code) => fail(slot, opts.rejected(`${opts.work} failed: its thread exited with code ${code}`)));
        worker.unref();
        slots.push(slot);
        dispatch();
      },
      (err: Error) => {
        starting--;
        // Without any thread the queue would wait forever: it is told to come back later instead.
        if (slots.length === 0 && starting === 0) {
          for (let job = take(); job; job = take()) job.reject(opts.busy(`${opts.work} threads could not start: ${err.message}`));
        }
      },
    );
  }

  return {
    run(project, message) {
      if (closed) return Promise.reject(opts.busy(`the ${opts.work} pool is closed`));
      if (queued >= opts.maxQueued) return Promise.reject(opts.busy(`${queued} ${opts.jobs} are already waiting`));
      return new Promise<R>((resolve, reject) => {
        const job: Job<M, R> = { id: nextId++, message, resolve, reject };
        const list = queues.get(project);
        if (list) list.push(job);
        else queues.set(project, [job]);
        queued++;
        dispatch();
      });
    },
    prepare() {
      workerEntry(opts.entry).catch(() => undefined);
    },
    async close() {
      closed = true;
      const closing = () => opts.busy(`the ${opts.work} pool is closed`);
      for (let job = take(); job; job = take()) job.reject(closing());
      const all = slots.splice(0);
      for (const slot of all) {
        clearTimeout(slot.idle);
        finish(slot)?.reject(closing());
      }
      await Promise.all(all.map((s) => s.worker.terminate()));
    },
  };
}

async function start(opts: ThreadPoolOptions): Promise<Worker> {
  const entry = await workerEntry(opts.entry);
  const worker = new Worker(entry, {
    workerData: opts.workerData,
    resourceLimits: { maxOldGenerationSizeMb: opts.maxHeapMb, maxYoungGenerationSizeMb: 8 },
  });
  return new Promise<Worker>((resolve, reject) => {
    const cleanup = () => {
      worker.off("message", onMessage);
      worker.off("error", onError);
      worker.off("exit", onExit);
    };
    const onMessage = (reply: PoolReply<object>) => {
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
