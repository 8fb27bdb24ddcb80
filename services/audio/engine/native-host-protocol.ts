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

/**
 * Where a render's time went in the Kokoro host (ms of wall time unless named CPU): logged by the
 * service at debug level, read by bench/live-first-sound.ts for its breakdown.
 */
export interface RenderTiming {
  /** From the request's arrival to its first model call (behind other texts' steps). */
  queuedMs: number;
  /** Waiting for eSpeak's IPA. */
  phonemesMs: number;
  /** The model's calls, and the CPU the host used meanwhile (every ONNX Runtime thread). */
  inferMs: number;
  inferCpuMs: number;
  /** Leveling and MP3 encoding. */
  encodeMs: number;
  /** Other texts' steps taken in turn between this one's first step and its end. */
  othersMs: number;
  /** From arrival to the MP3 sent. */
  totalMs: number;
  steps: number;
  audioS: number;
}

/** The host's start: loading the model, then one call to warm ONNX Runtime up (its first call costs more than any later one). */
export interface HostStartTiming {
  loadMs: number;
  warmupMs: number;
  warmupCpuMs: number;
}

export type HostReply =
  | { type: "ready"; timing?: HostStartTiming }
  | { type: "init-failed"; message: string }
  | { type: "done"; id: number; mp3: Uint8Array; timing?: RenderTiming }
  | { type: "failed"; id: number; message: string; code?: string };
