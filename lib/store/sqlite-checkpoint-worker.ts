// Worker thread of sqlite-checkpointer.ts: a connection of its own to each
// database file of the process, copying its write-ahead log into the
// database on request.
import { createRequire } from "node:module";
import { parentPort, workerData } from "node:worker_threads";
import type { Database } from "better-sqlite3";
import type { SqliteDriver } from "./sqlite-binding.js";

export interface CheckpointWorkerInit {
  requireFrom: string;
  driver: string;
}

export type CheckpointRequest = { type: "copy"; id: number; filename: string } | { type: "forget"; filename: string } | { type: "exit" };
export type CheckpointReply = { id: number; ok: true; log: number; copied: number } | { id: number; ok: false; message: string };

const port = parentPort!;
const init = workerData as CheckpointWorkerInit;
const Driver = createRequire(init.requireFrom)(init.driver) as SqliteDriver;
const open = new Map<string, Database>();

function connection(filename: string): Database {
  let db = open.get(filename);
  if (!db) {
    db = new Driver(filename, { fileMustExist: true });
    // The service's own connections hold the write lock for a moment per group.
    db.pragma("busy_timeout = 5000");
    open.set(filename, db);
  }
  return db;
}

port.on("message", (req: CheckpointRequest) => {
  if (req.type === "exit") {
    for (const db of open.values()) db.close();
    port.close();
    return;
  }
  if (req.type === "forget") {
    open.get(req.filename)?.close();
    open.delete(req.filename);
    return;
  }
  let reply: CheckpointReply;
  try {
    // PASSIVE: copies every frame no reader still needs, never waits for readers or writers;
    // then syncs the database file (synchronous=NORMAL, as the service's connections).
    const [r] = connection(req.filename).pragma("wal_checkpoint(PASSIVE)") as Array<{ busy: number; log: number; checkpointed: number }>;
    reply = { id: req.id, ok: true, log: r.log, copied: r.checkpointed };
  } catch (e) {
    reply = { id: req.id, ok: false, message: e instanceof Error ? e.message : String(e) };
  }
  port.postMessage(reply);
});
