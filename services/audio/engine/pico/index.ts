// The German engine: SVOX Pico (Apache-2.0) in WASM worker threads, 16 kHz PCM levelled to the
// loudness target and encoded by the same LAME as eSpeak. Its language files come from outside
// git (files.ts); without them createPicoEngine rejects with an Error that says how to get them,
// and the caller keeps eSpeak.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { createThreadPool, type ThreadPool } from "../../../../lib/threads/pool.js";
import { silenceFrames } from "../../mp3/index.js";
import { compileWasm } from "../assets.js";
import { EngineClosedError, type Mp3Format, type SpeechEngine, type SpeechRequest, SpeechInputError } from "../types.js";
import { loadLingware } from "./files.js";
import type { PicoJob, PicoResult, PicoWorkerInit } from "./protocol.js";
import { PICO_RATE } from "./synth.js";
import { picoText, picoVoice } from "./voices.js";

export { loadLingware, picoDirs, installedPicoDir } from "./files.js";

/** Pico's own rate, kept: resampling would cost more than Pico itself (~0.006 CPU-s per audio-s). */
export const PICO_FORMAT: Mp3Format = Object.freeze({ sampleRate: PICO_RATE, channels: 1, bitrate: 48 });

export interface PicoEngineOptions {
  /** Worker threads. Default 1: Pico renders a minute of speech in about half a second. */
  threads?: number;
  /** Directories to look in for the language files instead of PICO_DIR, the installed copy and Debian's. */
  dirs?: string[];
}

// A text is one chunk of an article (a few sentences to a few minutes of speech); far beyond
// what Pico needs even on a loaded machine, but it ends a thread that hangs.
const JOB_TIMEOUT_MS = 120_000;
// Pico's memory is WASM memory, outside this limit; the JavaScript around it needs little.
const THREAD_HEAP_MB = 64;
// The audio worker's fair queue already bounds what it hands over.
const MAX_QUEUED = 10_000;
const THREAD_IDLE_MS = 5_000;

export async function createPicoEngine(opts: PicoEngineOptions = {}): Promise<SpeechEngine> {
  const threads = opts.threads ?? 1;
  if (!Number.isInteger(threads) || threads < 1 || threads > 64) throw new RangeError(`threads must be an integer from 1 to 64, got ${threads}`);
  const lingware = loadLingware("de-DE", opts.dirs);
  const init: PicoWorkerInit = { pico: compilePico(), lame: compileWasm().lame, lingware: { ta: lingware.ta, sg: lingware.sg } };
  const pool: ThreadPool<PicoJob, PicoResult> = createThreadPool<PicoJob, PicoResult>({
    entry: new URL("./worker.ts", import.meta.url),
    workerData: init,
    threads,
    timeoutMs: JOB_TIMEOUT_MS,
    maxHeapMb: THREAD_HEAP_MB,
    maxQueued: MAX_QUEUED,
    // Each thread holds a V8 heap and Pico's WASM memory (~50 MB together); German articles come
    // in bursts, and a thread starts again in milliseconds, so an idle process gives it back.
    idleMs: THREAD_IDLE_MS,
    work: "Pico speech synthesis",
    jobs: "Pico syntheses",
    rejected: (reason) => new Error(reason),
    busy: (message) => new Error(message),
  });
  let closed = false;

  const engine: SpeechEngine = {
    name: "local-pico",
    format: PICO_FORMAT,
    concurrency: threads,
    async synthesize(req: SpeechRequest, signal?: AbortSignal) {
      if (closed) throw new EngineClosedError();
      if (!req || typeof req !== "object") throw new SpeechInputError("A speech request object is required");
      if (typeof req.text !== "string") throw new SpeechInputError("Speech text must be a string");
      if (req.text.trim() === "") throw new SpeechInputError("Speech text is empty");
      const voice = picoVoice(req.voice, req.lang, req.level);
      // Pico renders a chunk in well under a second: a running synthesis is not stopped midway,
      // an abort is answered before it starts and its result dropped after.
      signal?.throwIfAborted();
      const { mp3 } = await pool.run("", { text: picoText(req.text, voice), voice, bitrate: PICO_FORMAT.bitrate });
      signal?.throwIfAborted();
      return Buffer.from(mp3.buffer, mp3.byteOffset, mp3.byteLength);
    },
    silence(ms: number) {
      try {
        return Promise.resolve(silenceFrames(PICO_FORMAT, ms));
      } catch (err) {
        return Promise.reject(err);
      }
    },
    async close() {
      closed = true;
      await pool.close();
    },
  };

  // One word spoken now: a thread that cannot start (a broken WASM file, a bundling failure)
  // fails start-up here, where the caller can still choose eSpeak, not a listener's first chunk.
  try {
    await engine.synthesize({ text: "Test.", voice: "de-DE-KatjaNeural", lang: "de-DE" });
  } catch (err) {
    await pool.close();
    throw new Error(`The Pico engine did not start: ${err instanceof Error ? err.message : String(err)}`);
  }
  return engine;
}

let compiled: WebAssembly.Module | undefined;

function compilePico(): WebAssembly.Module {
  let file: string;
  try {
    file = createRequire(import.meta.url).resolve("@echogarden/svoxpico-wasm/svoxpico.wasm");
  } catch {
    throw new Error("The Pico engine's package @echogarden/svoxpico-wasm is not installed (npm ci installs it)");
  }
  compiled ??= new WebAssembly.Module(readFileSync(file));
  return compiled;
}
