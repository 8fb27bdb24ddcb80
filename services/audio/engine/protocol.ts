import type { NativePrograms } from "./native.js";
import type { EspeakVoice } from "./voices.js";

/** A WASM thread: eSpeak and LAME compiled once in the parent and run inside the thread. */
export interface WasmWorkerInit {
  kind: "wasm";
  control: SharedArrayBuffer;
  /** Directory of the WASM engine's files (see assets.ts). */
  assets: string;
  /** Compiled once in the parent and shared: every thread runs the same machine code. */
  modules: WasmModules;
}

/** A native thread: runs espeak-ng and lame as processes and shapes their PCM off the service's event loop. */
export interface NativeWorkerInit {
  kind: "native";
  control: SharedArrayBuffer;
  programs: NativePrograms;
}

export type WorkerInit = WasmWorkerInit | NativeWorkerInit;

export interface WasmModules {
  espeak: WebAssembly.Module;
  lame: WebAssembly.Module;
}

export interface JobMessage {
  id: number;
  text: string;
  voice: EspeakVoice;
}

/** Stop job `id`. A WASM thread, busy in synchronous code, sees the shared flag instead; a native thread's loop is free to take this. */
export interface AbortMessage {
  type: "abort";
  id: number;
}

export type WorkerReply =
  | { type: "ready" }
  | { type: "init-failed"; message: string }
  | { type: "done"; id: number; mp3: Uint8Array }
  | { type: "aborted"; id: number }
  | { type: "failed"; id: number; message: string };
