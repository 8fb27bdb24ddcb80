import type { Lang } from "../../../lib/voices.js";
export interface SpeechRequest {
  text: string;
  voice: string;
  lang: Lang;
  /** Loudness the voice is leveled to before encoding (default -19 LUFS, -1 dBTP); null: raw eSpeak level (for comparisons). */
  level?: { lufs: number; truePeak: number } | null;
}

export interface Mp3Format {
  sampleRate: number;
  channels: 1 | 2;
  bitrate: number; // kbps
}

export interface SpeechEngine {
  readonly name: string; // "local-wasm" | "local-native" | "local-kokoro"
  readonly format: Mp3Format;
  /** Syntheses it runs at once (threads or processes); more requests queue. */
  readonly concurrency?: number;
  /** One MP3 of bare frames (no ID3, no Info header) in `format`. */
  synthesize(req: SpeechRequest, signal?: AbortSignal): Promise<Buffer>;
  /** Digital silence in `format`, rounded to whole frames (24 ms each). */
  silence(ms: number): Promise<Buffer>;
  close(): Promise<void>;
}

/** The request itself is unusable (empty text, unknown voice, ...): retrying will not help. */
export class SpeechInputError extends Error {
  override name = "SpeechInputError";
}

export class EngineClosedError extends Error {
  override name = "EngineClosedError";
  constructor() {
    super("The speech engine is closed");
  }
}

// eSpeak's native rate is 22050 Hz and LAME keeps it, as the native pipe `lame -b 48 -m m` does:
// resampling (to the 24 kHz of the cloud voices) cost LAME about as much again as encoding. An
// article is always spoken by one provider, so local audio never joins a cloud stream; if it ever
// has to, the pipeline re-encodes the odd chunk.
export const ESPEAK_RATE = 22050;
export const LOCAL_FORMAT: Mp3Format = Object.freeze({ sampleRate: ESPEAK_RATE, channels: 1, bitrate: 48 });

// Kokoro speaks at 24 kHz, which LAME keeps (MPEG-2 layer III, 576 samples = 24 ms a frame), at
// the bitrate of the eSpeak engine. Each engine has its own format; an article is spoken by one.
export const KOKORO_RATE = 24000;
export const KOKORO_FORMAT: Mp3Format = Object.freeze({ sampleRate: KOKORO_RATE, channels: 1, bitrate: 48 });
