// Worker thread: one Pico + LAME, serving one text at a time; Pico's PCM goes through the same
// leveller and edge shaping as eSpeak's (wasm-synth.ts) before LAME encodes it.
import { workerData } from "node:worker_threads";
import { serveJobs } from "../../../../lib/threads/serve.js";
import { Leveler } from "../../loudness/limiter.js";
import { EdgeShaper } from "../pcm.js";
import { loadLame } from "../wasm-lame.js";
import { loadPico, PICO_RATE } from "./synth.js";
import type { PicoJob, PicoResult, PicoWorkerInit } from "./protocol.js";

// LAME's quality setting, as for eSpeak: the same encoder at the same speed.
const LAME_QUALITY = 7;

const init = workerData as PicoWorkerInit;
const pico = await loadPico(init.pico, init.lingware);
const lame = loadLame(init.lame);

serveJobs<PicoJob, PicoResult>(
  ({ text, voice, bitrate }) => {
    const mp3 = lame.open(PICO_RATE, bitrate, LAME_QUALITY);
    try {
      const shaper = new EdgeShaper(PICO_RATE, (samples) => mp3.write(samples));
      const leveler = voice.ceiling > 0 ? new Leveler(PICO_RATE, voice.gain, voice.ceiling, (samples) => shaper.push(samples)) : undefined;
      pico.speak(text, (block) => (leveler ? leveler.push(block) : shaper.push(block)));
      leveler?.finish();
      shaper.finish();
      return { mp3: mp3.end() };
    } finally {
      mp3.close();
    }
  },
  (err) => (err instanceof Error ? err.message : String(err)),
);
