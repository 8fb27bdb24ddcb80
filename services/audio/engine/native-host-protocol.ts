// Messages between a service and its speech hosts (native-host.ts, kokoro/host.ts), over the
// child's IPC channel with advanced serialization (the MP3 crosses as bytes, not as JSON). The
// native host's arguments are the programs' paths: eSpeak's, then LAME's.
import type { EspeakVoice } from "./voices.js";

/** What the Kokoro host renders: text in one of its voices, leveled to `level`. */
export interface KokoroJob {
  text: string;
  voice: string;
  level: { lufs: number; truePeak: number } | null;
}

type Cancel = { type: "cancel"; id: number };
export type NativeHostRequest = { type: "synthesize"; id: number; voice: EspeakVoice; text: string } | Cancel;
export type KokoroHostRequest = ({ type: "synthesize"; id: number } & KokoroJob) | Cancel;
export type HostRequest = NativeHostRequest | KokoroHostRequest;

export type HostReply =
  | { type: "ready" }
  | { type: "init-failed"; message: string }
  | { type: "done"; id: number; mp3: Uint8Array }
  | { type: "failed"; id: number; message: string; code?: string };
