// What GET /api/voices learns from the audio service (ListVoices, VoiceSample): which engines
// this process has (the speech router's providers), and a voice's sample rendered by the first
// step of its chain, the provider that would speak an article in it now.
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

/** The sample sentence of `lang` in `voice`, from the provider that would speak an article in it now. */
export async function renderSample(speech: SpeechRouter, voice: string, lang: Lang, signal: AbortSignal, level: LoudnessTarget): Promise<{ mp3: Buffer; engine: string }> {
  const step = speech.chain(voice, lang)[0];
  if (!step) throw new Error(`No engine speaks ${voice} in ${lang}`);
  const mp3 = await speech.synthesize(step, { text: SAMPLE_TEXT[lang], lang, level }, signal);
  return { mp3, engine: engineOf(step.provider) };
}
