// The offline speech engine: eSpeak NG + LAME, in WASM worker threads or as native programs run from worker threads.
import os from "node:os";
import { silenceFrames } from "../mp3/index.js";
import { findNativePrograms, type NativePrograms } from "./native.js";
import { SynthPool } from "./pool.js";
import { LOCAL_FORMAT, type Mp3Format, type SpeechEngine, type SpeechRequest } from "./types.js";
import { prepare } from "./voices.js";

export { SpeechInputError, EngineClosedError, LOCAL_FORMAT } from "./types.js";
export type { SpeechRequest, Mp3Format, SpeechEngine } from "./types.js";

export interface LocalEngineOptions {
  /** Concurrent syntheses (worker threads, or native processes). Default: os.availableParallelism(). */
  threads?: number;
  /** "auto": native espeak-ng + lame when both are on PATH, else WASM. Default "auto". */
  native?: "auto" | "never" | "always";
}

export async function createLocalEngine(opts: LocalEngineOptions = {}): Promise<SpeechEngine> {
  const threads = opts.threads ?? os.availableParallelism();
  if (!Number.isInteger(threads) || threads < 1 || threads > 256) throw new RangeError(`threads must be an integer from 1 to 256, got ${threads}`);
  const mode = opts.native ?? "auto";
  if (!["auto", "never", "always"].includes(mode)) throw new RangeError(`native must be "auto", "never" or "always", got ${String(mode)}`);
  if (mode !== "never") {
    const programs = await findNativePrograms();
    if (programs) return nativeEngine(programs, threads);
    if (mode === "always") throw new Error("native: 'always' needs both espeak-ng and lame on PATH");
  }
  return poolEngine("local-wasm", await SynthPool.start(threads));
}

function silence(ms: number): Promise<Buffer> {
  try {
    return Promise.resolve(silenceFrames(LOCAL_FORMAT, ms));
  } catch (err) {
    return Promise.reject(err);
  }
}

function poolEngine(name: string, pool: SynthPool): SpeechEngine {
  return {
    name,
    format: LOCAL_FORMAT,
    concurrency: pool.threads,
    async synthesize(req: SpeechRequest, signal?: AbortSignal) {
      const { text, voice } = prepare(req);
      return pool.run(text, voice, signal);
    },
    silence,
    close: () => pool.close(),
  };
}

/** espeak-ng and lame as processes, each pair run and streamed by a worker thread of the pool. */
function nativeEngine(programs: NativePrograms, threads: number): Promise<SpeechEngine> {
  return SynthPool.start(threads, programs).then((pool) => poolEngine("local-native", pool));
}
