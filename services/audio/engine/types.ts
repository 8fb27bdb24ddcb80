export interface SpeechRequest {
  text: string;
  voice: string;
  lang: "en-US" | "de-DE";
}

export interface Mp3Format {
  sampleRate: number;
  channels: 1 | 2;
  bitrate: number; // kbps
}

export interface SpeechEngine {
  readonly name: string; // "local-wasm" | "local-native"
  readonly format: Mp3Format;
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

// eSpeak's native rate is 22050 Hz; LAME resamples to 24 kHz, the rate the cloud voices deliver
// too, so local audio can stand in for (and be joined with) theirs. 48 kbps mono matches
// `lame -b 48 -m m`.
export const LOCAL_FORMAT: Mp3Format = Object.freeze({ sampleRate: 24000, channels: 1, bitrate: 48 });
export const ESPEAK_RATE = 22050;
