// The Kokoro-82M engine (int8 ONNX, Apache-2.0; docs/voices.md): English in Kokoro's voices, in a
// speech host of its own (host.ts) that loads the model once and keeps it, below the service's
// priority and off its event loop. Phonemes come from the native espeak-ng program.
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { silenceFrames } from "../../mp3/index.js";
import { wasmAssetsDir } from "../assets.js";
import { kokoroVoiceFor } from "../catalog.js";
import { ChildHost } from "../child-host.js";
import { findProgram } from "../native.js";
import type { KokoroJob } from "../native-host-protocol.js";
import { defusePhonemes } from "../text.js";
import { EngineClosedError, KOKORO_FORMAT, SpeechInputError, type SpeechEngine, type SpeechRequest } from "../types.js";
import { defaultKokoroDir, kokoroFiles } from "./files.js";
import type { Logger } from "../../../../lib/log.js";

export { defaultKokoroDir } from "./files.js";

export interface KokoroOptions {
  /** The files' directory (default: KOKORO_DIR, else .voices/kokoro in the repository). */
  dir?: string;
  /** ONNX Runtime's intra-op threads (default: defaultKokoroThreads()). */
  threads?: number;
  /** Where the host's start and each render's time went: logged at debug level (bench/live-first-sound.ts reads it). */
  log?: Logger;
}

/**
 * Two intra-op threads, or one on a single core. One thread is the cheapest per second of audio,
 * but two bring a listener's preview and a long article within their times on two idle cores
 * (docs/voices.md, "Cost"): a preview is waited for, and the host is niced, so the API keeps its share.
 */
export function defaultKokoroThreads(): number {
  return Math.min(2, os.availableParallelism());
}

const DEFAULT_LEVEL = { lufs: -19, truePeak: -1 };

/** The host's module: the sibling .js of compiled output, or the TypeScript source started with tsx's loader. */
function hostEntry(): { file: string; execArgv: string[] } {
  const fromSources = import.meta.url.endsWith(".ts");
  const file = fileURLToPath(new URL(fromSources ? "./host.ts" : "./host.js", import.meta.url));
  return { file, execArgv: fromSources ? ["--import", "tsx"] : [] };
}

/**
 * Starts the host and loads the model; rejects with a clear Error when the files, espeak-ng or
 * ONNX Runtime are missing or the model does not load (the caller then uses eSpeak).
 */
export async function createKokoroEngine(opts: KokoroOptions = {}): Promise<SpeechEngine> {
  const dir = path.resolve(opts.dir ?? process.env.KOKORO_DIR ?? defaultKokoroDir());
  const threads = opts.threads ?? defaultKokoroThreads();
  if (!Number.isInteger(threads) || threads < 1 || threads > os.availableParallelism() * 2) throw new RangeError(`threads must be an integer from 1 to ${os.availableParallelism() * 2}, got ${threads}`);
  const files = kokoroFiles(dir);
  const espeak = await findProgram("espeak-ng");
  if (!espeak) throw new Error("Kokoro needs the espeak-ng program for its phonemes, and it is not on PATH");
  let ort: string;
  try {
    ort = createRequire(import.meta.url).resolve("onnxruntime-node");
  } catch {
    throw new Error("Kokoro needs the npm package onnxruntime-node, which is not installed");
  }
  const entry = hostEntry();
  const host = new ChildHost<KokoroJob>({
    name: "Kokoro speech host",
    entry: async () => ({ file: entry.file, dispose: () => {} }),
    args: [dir, espeak, path.join(wasmAssetsDir(), "lame.wasm"), ort, String(threads)],
    execArgv: entry.execArgv,
    // Two malloc arenas: ONNX Runtime allocates from its own threads, and every further arena
    // would keep tens of MB of its own. ONNX Runtime's Linux library (1.31) carries an uploader of
    // usage telemetry to Microsoft, off only when told before it starts: no calls at run time.
    env: { ...process.env, MALLOC_ARENA_MAX: "2", ORT_DISABLE_TELEMETRY: "1" },
    // In the service's session: its niced inference threads (host.ts) give way to the service's
    // only where the kernel compares them directly, in one autogroup (bench/README.md, "Issue 34").
    // The host keeps Ctrl-C from itself and its eSpeak runs.
    ownSession: false,
    onStarted: (t) => opts.log?.info(rounded(t), "Kokoro speech host started: model loaded, first call made"),
    onRendered: (t) => opts.log?.debug(rounded(t), "Kokoro chunk rendered"),
  });
  await host.start();
  const voices = new Set(files.voiceNames);
  let closed = false;
  return {
    name: "local-kokoro",
    format: KOKORO_FORMAT,
    // Renders queue in the host, one at a time: its session's threads are the engine's CPU.
    concurrency: 1,
    async synthesize(req: SpeechRequest, signal?: AbortSignal) {
      if (closed) throw new EngineClosedError();
      const voice = prepareKokoro(req, voices);
      return host.run({ text: defusePhonemes(req.text), voice, level: req.level === undefined ? DEFAULT_LEVEL : req.level }, signal);
    },
    silence: async (ms: number) => silenceFrames(KOKORO_FORMAT, ms),
    async close() {
      closed = true;
      await host.close();
    },
  };
}

function rounded<T extends object>(timing: T): Record<string, number> {
  return Object.fromEntries(Object.entries(timing).map(([k, v]) => [k, Math.round(Number(v) * 10) / 10]));
}

/** The Kokoro voice for a request; SpeechInputError for bad input. */
function prepareKokoro(req: SpeechRequest, installed: ReadonlySet<string>): string {
  if (!req || typeof req !== "object") throw new SpeechInputError("A speech request object is required");
  if (typeof req.text !== "string") throw new SpeechInputError("Speech text must be a string");
  if (req.text.trim() === "") throw new SpeechInputError("Speech text is empty");
  const voice = kokoroVoiceFor(req.voice, req.lang);
  if (!voice) throw new SpeechInputError(`Kokoro has no voice for '${req.voice}' in '${req.lang}'`);
  if (!installed.has(voice)) throw new SpeechInputError(`Kokoro's voice '${voice}' is not installed`);
  return voice;
}
