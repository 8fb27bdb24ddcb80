// Copies the write-ahead logs of the process's database files into their
// databases from one worker thread. The copy and the sync of the database
// file that ends it took 10 to 45 ms of the event loop every 8 MB of writes
// on a busy disk, and every request waited meanwhile; now the event loop only
// empties a log that is already copied (sqlite-collection.ts checkpoint).
// The thread starts with the first database file opened, so that it is ready
// when a log first fills (a burst of writes fills 8 MB in a fifth of a second),
// and stops with the last one closed.
import { Worker } from "node:worker_threads";
import { workerEntry } from "../threads/worker-entry.js";
import { sqliteDriverLocation } from "./sqlite-binding.js";
import type { CheckpointReply, CheckpointRequest, CheckpointWorkerInit } from "./sqlite-checkpoint-worker.js";

interface Thread {
  worker: Promise<Worker>;
  files: number;
  /** Exited or failed to start: its files acquire a new one. */
  dead: boolean;
  waiting: Map<number, { resolve(): void; reject(e: Error): void }>;
}

let thread: Thread | undefined;
let nextId = 1;

function acquire(): Thread {
  if (thread && !thread.dead) {
    thread.files++;
    return thread;
  }
  const t: Thread = { worker: startWorker(() => t), files: 1, dead: false, waiting: new Map() };
  // A start that failed is not kept: the next copy tries again.
  t.worker.catch(() => {
    t.dead = true;
    if (thread === t) thread = undefined;
  });
  thread = t;
  return t;
}

async function startWorker(self: () => Thread): Promise<Worker> {
  const { requireFrom, name } = sqliteDriverLocation();
  const entry = await workerEntry(new URL("./sqlite-checkpoint-worker.ts", import.meta.url));
  const worker = new Worker(entry, {
    workerData: { requireFrom, driver: name } satisfies CheckpointWorkerInit,
    // It runs one pragma at a time and makes almost no garbage.
    resourceLimits: { maxYoungGenerationSizeMb: 1, maxOldGenerationSizeMb: 16 },
  });
  worker.on("message", (reply: CheckpointReply) => {
    const t = self();
    const w = t.waiting.get(reply.id);
    if (!w) return;
    t.waiting.delete(reply.id);
    if (t.waiting.size === 0) worker.unref();
    if (reply.ok) w.resolve();
    else w.reject(new Error(reply.message));
  });
  const failAll = (e: Error) => {
    const t = self();
    t.dead = true;
    if (thread === t) thread = undefined;
    for (const w of t.waiting.values()) w.reject(e);
    t.waiting.clear();
  };
  worker.on("error", failAll);
  worker.on("exit", (code) => failAll(new Error(`the checkpoint thread exited (${code})`)));
  // Idle, it does not keep the process alive; a copy under way does (copy() refs it). After the
  // listeners: attaching a message listener refs the thread again.
  worker.unref();
  return worker;
}

/** One database file's use of the thread. */
export class Checkpointer {
  private thread = acquire();
  private closed = false;
  /** Copies made (tests). */
  copies = 0;

  constructor(private readonly filename: string) {}

  /** Copies every frame of the log no reader still needs into the database and syncs it. */
  async copy(): Promise<void> {
    if (this.closed) throw new Error("the checkpointer is closed");
    if (this.thread.dead) this.thread = acquire();
    const t = this.thread;
    const worker = await t.worker;
    const id = nextId++;
    await new Promise<void>((resolve, reject) => {
      t.waiting.set(id, { resolve, reject });
      worker.ref();
      worker.postMessage({ type: "copy", id, filename: this.filename } satisfies CheckpointRequest);
    });
    this.copies++;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const t = this.thread;
    const worker = await t.worker.catch(() => undefined);
    if (!worker || t.dead) return;
    if (--t.files > 0) {
      worker.postMessage({ type: "forget", filename: this.filename } satisfies CheckpointRequest);
      return;
    }
    // The last file: the thread closes its connections and ends.
    t.dead = true;
    if (thread === t) thread = undefined;
    const exited = new Promise<void>((resolve) => worker.once("exit", () => resolve()));
    // Held by the event loop until it has ended: an unreferenced thread's exit would not be waited for.
    worker.ref();
    worker.postMessage({ type: "exit" } satisfies CheckpointRequest);
    await exited;
  }
}
