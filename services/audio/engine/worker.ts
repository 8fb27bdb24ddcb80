// Worker thread entry: owns one eSpeak + LAME instance and serves synthesis jobs one at a time.
import { parentPort, workerData } from "node:worker_threads";
import { loadWasmSynth } from "./wasm-synth.js";
import type { JobMessage, WorkerReply, WorkerInit } from "./protocol.js";

const port = parentPort!;
const { control, assets, modules } = workerData as WorkerInit;
// control[0] holds the id of a job the parent wants stopped; the synth polls it.
const abortFlag = new Int32Array(control);

try {
  const synth = await loadWasmSynth(assets, modules);
  port.on("message", (job: JobMessage) => {
    let reply: WorkerReply;
    try {
      const mp3 = synth.synthesize(job.voice, job.text, () => Atomics.load(abortFlag, 0) === job.id);
      if (mp3 === null) reply = { type: "aborted", id: job.id };
      else {
        reply = { type: "done", id: job.id, mp3 };
        // Transferred, not cloned: the synth hands out bytes that own their ArrayBuffer.
        port.postMessage(reply, [mp3.buffer]);
        return;
      }
    } catch (err) {
      reply = { type: "failed", id: job.id, message: err instanceof Error ? err.message : String(err) };
    }
    port.postMessage(reply);
  });
  port.postMessage({ type: "ready" } satisfies WorkerReply);
} catch (err) {
  port.postMessage({ type: "init-failed", message: err instanceof Error ? err.message : String(err) } satisfies WorkerReply);
}
