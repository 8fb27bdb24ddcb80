import type { Lingware } from "./files.js";
import type { PicoVoice } from "./voices.js";

export interface PicoWorkerInit {
  /** Compiled once in the parent: every thread runs the same machine code. */
  pico: WebAssembly.Module;
  lame: WebAssembly.Module;
  /** The language files, read and verified by the parent. */
  lingware: Pick<Lingware, "ta" | "sg">;
}

export interface PicoJob {
  /** Text with Pico's markup around it (voices.ts picoText). */
  text: string;
  voice: PicoVoice;
  bitrate: number;
}

export interface PicoResult {
  mp3: Uint8Array;
}
