import type { PronunciationRule } from "../../../lib/pronunciations.js";
import type { Lang, ProviderName } from "../../../lib/voices.js";
import type { LoudnessTarget } from "../loudness/index.js";

export interface ProviderRequest {
  text: string;
  /** A voice name this provider speaks (already mapped for fallbacks). */
  voice: string;
  lang: Lang;
  /** Delivery instructions; only providers with `usesPrompt` act on them. */
  prompt?: string;
  /**
   * The article's pronunciation rules. `text` holds marks naming them
   * (services/audio/text/pronounce.ts); every provider renders the marks its own way.
   */
  pronunciations?: readonly PronunciationRule[];
  /** Loudness target; the local engine levels its PCM to it (cloud audio is normalised after assembly). */
  level?: LoudnessTarget;
}

export interface SpeechProvider {
  readonly name: ProviderName;
  /** What the article records as its provider; defaults to `name` (the local engine names its variant). */
  readonly label?: string;
  /** Longest text accepted in one request, in characters. */
  readonly maxChars: number;
  /**
   * Requests it works on at once (a local engine: its own concurrency). More of one article's
   * chunks in flight would only share its time, each finishing later: the first sound and the
   * preview wait for the first chunks, not for all.
   */
  readonly concurrency?: number;
  /** Whether `prompt` changes the audio (and therefore belongs in the cache key). */
  readonly usesPrompt: boolean;
  /** The model (or engine variant) that would serve the request: part of the cache key. */
  model(req: ProviderRequest): string;
  /**
   * One MP3 for the text; throws ProviderError (retryable or not) on failure. `onData`, when
   * given, sees the body's bytes as they arrive, in order (the cloud providers; others may not
   * call it); after a failure what it saw is to be dropped. It must not throw.
   */
  synthesize(req: ProviderRequest, signal: AbortSignal, onData?: (bytes: Uint8Array) => void): Promise<Buffer>;
}
