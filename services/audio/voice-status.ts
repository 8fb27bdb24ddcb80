// What GET /api/voices learns from the audio service (ListVoices, VoiceSample): which engines
// this process has, read off the speech router's chains (the engine a chain's first step names
// is the one that would speak), and a voice's sample rendered by that first step.
import type { Lang } from "../../lib/voices.js";
import type { EngineName, EnginesLoaded } from "./engine/catalog.js";
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

/** The engines some chain of this router can reach: probed with a voice each engine would speak. */
export function loadedFrom(speech: SpeechRouter): EnginesLoaded {
  const reachable = new Set<EngineName>();
  const probes: Array<[string, Lang]> = [
    ["alloy", "en-US"],
    ["af_heart", "en-US"],
    ["de-DE-KatjaNeural", "de-DE"],
  ];
  for (const [voice, lang] of probes) {
    try {
      for (const step of speech.chain(voice, lang)) reachable.add(engineOf(step.provider));
    } catch {
      // A voice this build does not know (af_heart before Kokoro's voices): nothing to learn from it.
    }
  }
  return { openai: reachable.has("openai"), azure: reachable.has("azure"), kokoro: reachable.has("kokoro"), pico: reachable.has("pico") };
}

/** The sample sentence of `lang` in `voice`, from the provider that would speak an article in it now. */
export async function renderSample(speech: SpeechRouter, voice: string, lang: Lang, signal: AbortSignal, level: LoudnessTarget): Promise<{ mp3: Buffer; engine: string }> {
  const step = speech.chain(voice, lang)[0];
  if (!step) throw new Error(`No engine speaks ${voice} in ${lang}`);
  const mp3 = await speech.synthesize(step, { text: SAMPLE_TEXT[lang], lang, level }, signal);
  return { mp3, engine: engineOf(step.provider) };
}
