import { Worker } from "node:worker_threads";
import { workerEntry } from "../../../lib/threads/worker-entry.js";
import { compileWasm, wasmAssetsDir } from "./assets.js";
import type { NativePrograms } from "./native.js";
import type { AbortMessage, JobMessage, WorkerInit, WorkerReply } from "./protocol.js";
import { EngineClosedError } from "./types.js";
import type { EspeakVoice } from "./voices.js";

interface Job {
  id: number;
  text: string;
  voice: EspeakVoice;
  resolve: (mp3: Buffer) => void;
  reject: (err: unknown) => void;
  signal?: AbortSignal;
  onAbort?: () => void;
  settled: boolean;
}

interface Slot {
  worker: Worker;
  abortFlag: Int32Array;
  /** Jobs the thread is running: at most one in WASM (synchronous), up to the pool's size for native programs. */
  jobs: Job[];
}

/**
 * Worker threads fed from one FIFO queue. WASM: `size` threads, each with its own eSpeak + LAME
 * running one job at a time. Native (given the programs): one thread running up to `size` jobs
 * at once, each as an espeak-ng | lame pair of processes whose PCM it streams (waiting on
 * processes needs no thread of its own, and each thread costs ~25 MB).
 */
export class SynthPool {
  private readonly slots: Slot[] = [];
  private readonly queue: Job[] = [];
  private nextId = 1;
  private closed = false;

  private constructor(
    private readonly size: number,
    private readonly native: NativePrograms | undefined,
  ) {}

  static async start(size: number, native?: NativePrograms): Promise<SynthPool> {
    const pool = new SynthPool(size, native);
    const started = await Promise.allSettled(Array.from({ length: native ? 1 : size }, () => spawnSlot(native)));
    for (const s of started) if (s.status === "fulfilled") pool.adopt(s.value);
    const failure = started.find((s): s is PromiseRejectedResult => s.status === "rejected");
    if (failure) {
      await pool.close();
      throw new Error(`Speech worker failed to start: ${errorMessage(failure.reason)}`);
    }
    return pool;
  }

  get threads(): number {
    return this.size;
  }

  /** Jobs being synthesized right now (at most `threads`). */
  get running(): number {
    return this.slots.reduce((n, s) => n + s.jobs.length, 0);
  }

  /** Jobs one thread runs at once. */
  private get capacity(): number {
    return this.native ? this.size : 1;
  }

  get queued(): number {
    return this.queue.length;
  }

  run(text: string, voice: EspeakVoice, signal?: AbortSignal): Promise<Buffer> {
    if (this.closed) return Promise.reject(new EngineClosedError());
    if (signal?.aborted) return Promise.reject(abortReason(signal));
    return new Promise<Buffer>((resolve, reject) => {
      const job: Job = { id: this.nextId++, text, voice, resolve, reject, signal, settled: false };
      if (signal) {
        job.onAbort = () => this.abort(job);
        signal.addEventListener("abort", job.onAbort, { once: true });
      }
      this.queue.push(job);
      this.dispatch();
    });
  }

  async close(): Promise<void> {
    if (this.closed && this.slots.length === 0) return;
    this.closed = true;
    for (const job of this.queue.splice(0)) this.settle(job, new EngineClosedError());
    const slots = this.slots.splice(0);
    for (const slot of slots) for (const job of slot.jobs) this.settle(job, new EngineClosedError());
    // A native thread's programs outlive it unless it kills them first: it answers the abort once they are gone.
    if (this.native) await Promise.all(slots.flatMap((s) => s.jobs.map((job) => this.stopJob(s, job))));
    await Promise.all(slots.map((s) => s.worker.terminate()));
  }

  private adopt(slot: Slot): void {
    if (this.closed) {
      void slot.worker.terminate();
      return;
    }
    slot.worker.on("message", (reply: WorkerReply) => this.onReply(slot, reply));
    slot.worker.on("error", (err) => this.onCrash(slot, err));
    slot.worker.on("exit", (code) => this.onCrash(slot, new Error(`Speech worker exited with code ${code}`)));
    // Idle workers must not keep the process alive; busy ones must (someone awaits their result).
    slot.worker.unref();
    this.slots.push(slot);
    this.dispatch();
  }

  private dispatch(): void {
    for (const slot of this.slots) {
      while (slot.jobs.length < this.capacity) {
        const job = this.queue.shift();
        if (!job) return;
        slot.jobs.push(job);
        slot.worker.ref();
        const message: JobMessage = { id: job.id, text: job.text, voice: job.voice };
        slot.worker.postMessage(message);
      }
    }
  }

  private onReply(slot: Slot, reply: WorkerReply): void {
    const at = "id" in reply ? slot.jobs.findIndex((j) => j.id === reply.id) : -1;
    if (at < 0) return;
    const [job] = slot.jobs.splice(at, 1);
    if (slot.jobs.length === 0) slot.worker.unref();
    if (reply.type === "done") this.settle(job, null, Buffer.from(reply.mp3.buffer, reply.mp3.byteOffset, reply.mp3.byteLength));
    else if (reply.type === "failed") this.settle(job, new Error(`Local speech synthesis failed: ${reply.message}`));
    else this.settle(job, job.signal ? abortReason(job.signal) : new Error("Synthesis aborted"));
    this.dispatch();
  }

  private onCrash(slot: Slot, err: Error): void {
    const index = this.slots.indexOf(slot);
    if (index < 0) return; // already replaced, or the pool is closing
    this.slots.splice(index, 1);
    for (const job of slot.jobs) this.settle(job, new Error(`Speech worker crashed: ${err.message}`));
    void slot.worker.terminate();
    if (this.closed) return;
    spawnSlot(this.native).then(
      (fresh) => this.adopt(fresh),
      (spawnErr) => {
        // Without any worker the queue would wait forever; fail it loudly instead.
        if (this.slots.length === 0) for (const job of this.queue.splice(0)) this.settle(job, new Error(`No speech worker available: ${errorMessage(spawnErr)}`));
      },
    );
  }

  private abort(job: Job): void {
    const queued = this.queue.indexOf(job);
    if (queued >= 0) this.queue.splice(queued, 1);
    const slot = this.slots.find((s) => s.jobs.includes(job));
    // The worker notices (WASM: at its next audio chunk) and reports back; the job keeps its place until then.
    if (slot) void this.stopJob(slot, job);
    this.settle(job, abortReason(job.signal!));
  }

  /** Asks the thread to stop the job; settles once it answered (or exited, or after a second). */
  private stopJob(slot: Slot, job: Job): Promise<void> {
    Atomics.store(slot.abortFlag, 0, job.id);
    slot.worker.postMessage({ type: "abort", id: job.id } satisfies AbortMessage);
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        slot.worker.off("message", onReply);
        slot.worker.off("exit", done);
        resolve();
      };
      const onReply = (reply: WorkerReply) => {
        if ("id" in reply && reply.id === job.id) done();
      };
      const timer = setTimeout(done, 1000);
      slot.worker.on("message", onReply);
      slot.worker.on("exit", done);
    });
  }

  private settle(job: Job, err: unknown, mp3?: Buffer): void {
    if (job.settled) return;
    job.settled = true;
    if (job.onAbort) job.signal?.removeEventListener("abort", job.onAbort);
    if (err) job.reject(err);
    else job.resolve(mp3!);
  }
}

async function spawnSlot(native: NativePrograms | undefined): Promise<Slot> {
  const control = new SharedArrayBuffer(4);
  const entry = await workerEntry(native ? new URL("./native-worker.ts", import.meta.url) : new URL("./worker.ts", import.meta.url));
  const init: WorkerInit = native ? { kind: "native", control, programs: native } : { kind: "wasm", control, assets: wasmAssetsDir(), modules: compileWasm() };
  const worker = new Worker(entry, {
    workerData: init,
    // A worker's JavaScript makes little garbage (the audio lives in WASM memory), but V8's default
    // young generation still grows to tens of MB per thread. 4 MB: as fast, peak RSS ~15 MB lower for two.
    resourceLimits: { maxYoungGenerationSizeMb: 4 },
  });
  return new Promise<Slot>((resolve, reject) => {
    const fail = (err: Error) => {
      cleanup();
      void worker.terminate();
      reject(err);
    };
    const onMessage = (reply: WorkerReply) => {
      if (reply.type === "ready") {
        cleanup();
        resolve({ worker, abortFlag: new Int32Array(control), jobs: [] });
      } else if (reply.type === "init-failed") fail(new Error(reply.message));
    };
    const onExit = (code: number) => fail(new Error(`exited with code ${code} during start-up`));
    const cleanup = () => {
      worker.off("message", onMessage);
      worker.off("error", fail);
      worker.off("exit", onExit);
    };
    worker.on("message", onMessage);
    worker.on("error", fail);
    worker.on("exit", onExit);
  });
}

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException("The operation was aborted", "AbortError");
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
