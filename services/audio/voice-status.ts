// What GET /api/voices learns from the audio service (ListVoices, VoiceSample): which engines
// this process has (the speech router's providers), and a voice's sample rendered by the first
// step of its chain, the provider that would speak an article in it now.
import { raceAbort } from "../../lib/race-abort.js";
import type { Lang } from "../../lib/voices.js";
import type { EngineName } from "./engine/catalog.js";
import type { LoudnessTarget } from "./loudness/index.js";
import type { SpeechProvider, SpeechRouter } from "./providers/index.js";
import { SAMPLE_TEXT } from "./service.js";

/** The catalog's name for a provider: the cloud ones by name, the local ones by their engine (its label). */
export function engineOf(provider: SpeechProvider): EngineName {
  if (provider.name === "openai" || provider.name === "azure") return provider.name;
  const label = provider.label ?? "";
  if (label.includes("kokoro")) return "kokoro";
  if (label.includes("pico")) return "pico";
  return "espeak";
}

/**
 * The sample sentence of `lang` in `voice`, from the provider that would speak an article in it
 * now: rendered once per voice, locale and engine, and kept. A render outlives the request that
 * started it: on a busy machine (local engines run below the service's priority) it may take
 * longer than the caller waits, and the caller's retry then finds it done instead of starting over.
 */
export function sampleRenderer(speech: SpeechRouter, level: LoudnessTarget): (voice: string, lang: Lang, signal: AbortSignal) => Promise<{ mp3: Buffer; engine: string }> {
  // Voices x locales x engines: a few dozen short MP3s at most.
  const kept = new Map<string, Promise<{ mp3: Buffer; engine: string }>>();
  return (voice, lang, signal) => {
    const step = speech.chain(voice, lang)[0];
    if (!step) return Promise.reject(new Error(`No engine speaks ${voice} in ${lang}`));
    const engine = engineOf(step.provider);
    const key = `${voice}|${lang}|${engine}`;
    let sample = kept.get(key);
    if (!sample) {
      sample = speech.synthesize(step, { text: SAMPLE_TEXT[lang], lang, level }, new AbortController().signal).then((mp3) => ({ mp3, engine }));
      kept.set(key, sample);
      // A failure is not kept: the next request renders again.
      sample.catch(() => kept.delete(key));
    }
    return raceAbort(sample, signal);
  };
}
