// The packed text of the embedded store (sqlite-collection.ts) is deflated raw
// with a small window. Deflating 1 KB of prose costs ~60 µs of the event loop,
// most of it zlib's set-up per call, and a bulk import stores thousands of
// articles a second: alone, the deflate held an import under 4,000 a second.
// So the texts of one turn go to one worker thread in one message when there
// are enough of them to pay for the trip, and run on the core the event loop
// leaves idle; a lone create deflates in place, without waiting for a thread.
import { Worker } from "node:worker_threads";
import { deflateRawSync, inflateRawSync } from "node:zlib";

// A small window and hash table: zlib's defaults set up and clear a 256 KB state per call,
// several times the work of deflating 1 KB of prose, for the same ratio on articles.
const DEFLATE = { level: 6, windowBits: 12, memLevel: 5 } as const;
const INFLATE = { windowBits: 12 } as const;

export const deflated = (text: string): Buffer => deflateRawSync(text, DEFLATE);
export const inflated = (z: Buffer): string => inflateRawSync(z, INFLATE).toString("utf8");

/** Fewer texts than this in a turn are deflated in place: the trip to the thread costs more. */
const THREAD_FROM = 8;
/** The thread is stopped after this long without work (its heap is a few MB an idle process need not keep). */
const IDLE_MS = 30_000;

// Plain JavaScript evaluated as the thread's script: nothing to load or bundle.
const THREAD_SOURCE = `
const { parentPort } = require("node:worker_threads");
const { deflateRawSync } = require("node:zlib");
parentPort.on("message", ({ id, texts, options }) => {
  parentPort.postMessage({ id, out: texts.map((t) => deflateRawSync(t, options)) });
});`;

type Done = (z: Buffer) => void;

class DeflateThread {
  private worker: Worker | undefined;
  private turn: Array<{ text: string; done: Done }> = [];
  private readonly inFlight = new Map<number, Array<{ text: string; done: Done }>>();
  private nextId = 1;
  private idleTimer: NodeJS.Timeout | undefined;
  /** Texts sent to the thread so far (tests). */
  textsSent = 0;

  /** Deflates `text` with this turn's others; `done` gets the bytes (from the thread, or made in place). */
  deflate(text: string, done: Done): void {
    this.turn.push({ text, done });
    if (this.turn.length === 1) setImmediate(() => this.send());
  }

  private send(): void {
    const jobs = this.turn;
    this.turn = [];
    const worker = jobs.length >= THREAD_FROM ? this.thread() : undefined;
    if (!worker) return inPlace(jobs);
    const id = this.nextId++;
    this.inFlight.set(id, jobs);
    this.textsSent += jobs.length;
    clearTimeout(this.idleTimer);
    worker.postMessage({ id, texts: jobs.map((j) => j.text), options: DEFLATE });
  }

  private thread(): Worker | undefined {
    if (this.worker) return this.worker;
    try {
      const w = new Worker(THREAD_SOURCE, { eval: true, resourceLimits: { maxOldGenerationSizeMb: 64 } });
      w.unref();
      w.on("message", ({ id, out }: { id: number; out: Uint8Array[] }) => {
        const jobs = this.inFlight.get(id);
        this.inFlight.delete(id);
        jobs?.forEach((j, i) => j.done(Buffer.from(out[i].buffer, out[i].byteOffset, out[i].byteLength)));
        if (this.inFlight.size === 0) this.idleTimer = setTimeout(() => this.stop(), IDLE_MS).unref();
      });
      // A thread that fails leaves its texts to be deflated in place; the next turn starts another.
      const lost = () => {
        if (this.worker !== w) return;
        this.worker = undefined;
        const jobs = [...this.inFlight.values()].flat();
        this.inFlight.clear();
        inPlace(jobs);
      };
      w.on("error", lost);
      w.on("exit", lost);
      this.worker = w;
      return w;
    } catch {
      return undefined;
    }
  }

  private stop(): void {
    if (this.inFlight.size || !this.worker) return;
    const w = this.worker;
    this.worker = undefined;
    void w.terminate();
  }
}

function inPlace(jobs: Array<{ text: string; done: Done }>): void {
  for (const j of jobs) j.done(deflated(j.text));
}

/** One thread for the process: every embedded store's packed writes share it. */
export const deflateThread = new DeflateThread();
