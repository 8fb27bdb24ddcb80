import type { EspeakVoice } from "./voices.js";

export interface WorkerInit {
  control: SharedArrayBuffer;
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
