// The offline speech engine: eSpeak NG + LAME, in WASM worker threads or as native programs.
import os from "node:os";
import { silenceFrames } from "../mp3/index.js";
import { findNativePrograms, type NativePrograms } from "./native.js";
import { NativeHost } from "./native-host-client.js";
import { SynthPool } from "./pool.js";
import { EngineClosedError, LOCAL_FORMAT, type Mp3Format, type SpeechEngine, type SpeechRequest } from "./types.js";
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
  return wasmEngine(await SynthPool.start(threads));
}

function silence(ms: number): Promise<Buffer> {
  try {
    return Promise.resolve(silenceFrames(LOCAL_FORMAT, ms));
  } catch (err) {
    return Promise.reject(err);
  }
}

function wasmEngine(pool: SynthPool): SpeechEngine {
  return {
    name: "local-wasm",
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

function nativeEngine(programs: NativePrograms, threads: number): SpeechEngine {
  const gate = new Gate(threads);
  const host = new NativeHost(programs);
  let closed = false;
  const running = new Set<AbortController>();
  return {
    name: "local-native",
    format: LOCAL_FORMAT,
    concurrency: threads,
    async synthesize(req: SpeechRequest, signal?: AbortSignal) {
      if (closed) throw new EngineClosedError();
      const { text, voice } = prepare(req);
      // An already aborted signal fires no "abort" event to forward: refuse here, as the WASM pool does.
      if (signal?.aborted) throw signal.reason ?? new DOMException("The operation was aborted", "AbortError");
      // Our own controller lets close() stop child processes as well as the caller's signal.
      const controller = new AbortController();
      const forward = () => controller.abort(signal?.reason);
      signal?.addEventListener("abort", forward, { once: true });
      running.add(controller);
      try {
        await gate.enter(controller.signal);
        try {
          return await host.synthesize(voice, text, controller.signal);
        } finally {
          gate.leave();
        }
      } finally {
        running.delete(controller);
        signal?.removeEventListener("abort", forward);
      }
    },
    silence,
    async close() {
      closed = true;
      for (const c of running) c.abort(new EngineClosedError());
      await host.close();
    },
  };
}

/** Counting semaphore whose waiters can give up via an AbortSignal. */
class Gate {
  private readonly waiters: Array<() => void> = [];
  constructor(private free: number) {}

  enter(signal: AbortSignal): Promise<void> {
    if (signal.aborted) return Promise.reject(signal.reason);
    if (this.free > 0) {
      this.free--;
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const grant = () => {
        signal.removeEventListener("abort", cancel);
        resolve();
      };
      const cancel = () => {
        const i = this.waiters.indexOf(grant);
        if (i >= 0) this.waiters.splice(i, 1);
        reject(signal.reason);
      };
      signal.addEventListener("abort", cancel, { once: true });
      this.waiters.push(grant);
    });
  }

  leave(): void {
    const next = this.waiters.shift();
    if (next) next();
    else this.free++;
  }
}
