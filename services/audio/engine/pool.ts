import { Worker } from "node:worker_threads";
import { workerEntry } from "../../../lib/threads/worker-entry.js";
import { compileWasm, wasmAssetsDir } from "./assets.js";
import type { JobMessage, WorkerInit, WorkerReply } from "./protocol.js";
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
  job?: Job;
}

/** A fixed set of worker threads, each with its own eSpeak + LAME, fed from one FIFO queue. */
export class SynthPool {
  private readonly slots: Slot[] = [];
  private readonly queue: Job[] = [];
  private nextId = 1;
  private closed = false;

  private constructor(private readonly size: number) {}

  static async start(size: number): Promise<SynthPool> {
    const pool = new SynthPool(size);
    const started = await Promise.allSettled(Array.from({ length: size }, () => spawnSlot()));
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

  /** Jobs being synthesized right now (at most one per thread). */
  get running(): number {
    return this.slots.filter((s) => s.job).length;
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
    for (const slot of slots) if (slot.job) this.settle(slot.job, new EngineClosedError());
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
      if (slot.job) continue;
      const job = this.queue.shift();
      if (!job) return;
      slot.job = job;
      slot.worker.ref();
      const message: JobMessage = { id: job.id, text: job.text, voice: job.voice };
      slot.worker.postMessage(message);
    }
  }

  private onReply(slot: Slot, reply: WorkerReply): void {
    const job = slot.job;
    if (!job || !("id" in reply) || reply.id !== job.id) return;
    slot.job = undefined;
    slot.worker.unref();
    if (reply.type === "done") this.settle(job, null, Buffer.from(reply.mp3.buffer, reply.mp3.byteOffset, reply.mp3.byteLength));
    else if (reply.type === "failed") this.settle(job, new Error(`Local speech synthesis failed: ${reply.message}`));
    else this.settle(job, job.signal ? abortReason(job.signal) : new Error("Synthesis aborted"));
    this.dispatch();
  }

  private onCrash(slot: Slot, err: Error): void {
    const index = this.slots.indexOf(slot);
    if (index < 0) return; // already replaced, or the pool is closing
    this.slots.splice(index, 1);
    if (slot.job) this.settle(slot.job, new Error(`Speech worker crashed: ${err.message}`));
    void slot.worker.terminate();
    if (this.closed) return;
    spawnSlot().then(
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
    const slot = this.slots.find((s) => s.job === job);
    // The worker notices at its next audio chunk and reports back; the slot stays busy until then.
    if (slot) Atomics.store(slot.abortFlag, 0, job.id);
    this.settle(job, abortReason(job.signal!));
  }

  private settle(job: Job, err: unknown, mp3?: Buffer): void {
    if (job.settled) return;
    job.settled = true;
    if (job.onAbort) job.signal?.removeEventListener("abort", job.onAbort);
    if (err) job.reject(err);
    else job.resolve(mp3!);
  }
}

async function spawnSlot(): Promise<Slot> {
  const control = new SharedArrayBuffer(4);
  const entry = await workerEntry(new URL("./worker.ts", import.meta.url));
  const worker = new Worker(entry, {
    workerData: { control, assets: wasmAssetsDir(), modules: compileWasm() } satisfies WorkerInit,
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
        resolve({ worker, abortFlag: new Int32Array(control) });
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
