import type { EspeakVoice } from "./voices.js";

export interface WorkerInit {
  control: SharedArrayBuffer;
  /** Directory of the WASM engine's files (see assets.ts). */
  assets: string;
  /** Compiled once in the parent and shared: every thread runs the same machine code. */
  modules: WasmModules;
}

export interface WasmModules {
  espeak: WebAssembly.Module;
  lame: WebAssembly.Module;
}

export interface JobMessage {
  id: number;
  text: string;
  voice: EspeakVoice;
}

export type WorkerReply =
  | { type: "ready" }
  | { type: "init-failed"; message: string }
  | { type: "done"; id: number; mp3: Uint8Array }
  | { type: "aborted"; id: number }
  | { type: "failed"; id: number; message: string };
