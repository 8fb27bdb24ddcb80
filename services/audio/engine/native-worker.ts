// Worker thread entry of the native engine: spawns espeak-ng and lame and
// streams their PCM through the edge shaper and leveler here, not on the
// service's event loop. There, the spawns (a fork of a process of a few
// hundred MB) and the PCM chunks took 1.2 s of every 1.7 s the loop was busy
// during a stream of creates, and each create waited behind them.
import { parentPort, workerData } from "node:worker_threads";
import { lowerThisWorkerThread } from "../../../lib/threads/background-priority.js";
import { nativeSynthesize, SPEECH_NICENESS } from "./native.js";
import type { AbortMessage, JobMessage, NativeWorkerInit, WorkerReply } from "./protocol.js";

const port = parentPort!;
const { programs } = workerData as NativeWorkerInit;
const running = new Map<number, AbortController>();
// The PCM shaping too is batch work (and the programs spawned from here inherit the value).
lowerThisWorkerThread(SPEECH_NICENESS);

port.on("message", (msg: JobMessage | AbortMessage) => {
  if ("type" in msg) {
    running.get(msg.id)?.abort();
    return;
  }
  const controller = new AbortController();
  running.set(msg.id, controller);
  nativeSynthesize(programs, msg.voice, msg.text, controller.signal).then(
    (mp3) => {
      running.delete(msg.id);
      // Transferred, not cloned; a small result may sit in Buffer's shared pool and is copied out first.
      const owns = mp3.byteOffset === 0 && mp3.byteLength === mp3.buffer.byteLength;
      const bytes = owns ? new Uint8Array(mp3.buffer) : Uint8Array.from(mp3);
      port.postMessage({ type: "done", id: msg.id, mp3: bytes } satisfies WorkerReply, [bytes.buffer as ArrayBuffer]);
    },
    (err: unknown) => {
      running.delete(msg.id);
      const reply: WorkerReply = controller.signal.aborted ? { type: "aborted", id: msg.id } : { type: "failed", id: msg.id, message: err instanceof Error ? err.message : String(err) };
      port.postMessage(reply);
    },
  );
});
port.postMessage({ type: "ready" } satisfies WorkerReply);
