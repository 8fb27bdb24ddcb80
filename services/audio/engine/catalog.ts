// The voice catalog: every voice the API accepts, the engine whose voice it is, whether that
// engine is neural, and which engine actually speaks it given what this process has loaded and
// which cloud keys are configured. The API's names and locales come from lib/voices.ts (the
// gateway validates against them); everything about engines is here, and only here.
//
// Routing, in order: a cloud voice goes to its cloud provider when its key is set; otherwise the
// best local engine that speaks the voice in that locale and is loaded: Kokoro (neural, English),
// Pico (German), eSpeak NG (every voice and locale, always there: the engine of last resort).
import { KOKORO_VOICE_NAMES, VOICES, voiceInfo, type Lang } from "../../../lib/voices.js";

export type EngineName = "kokoro" | "pico" | "espeak" | "openai" | "azure";
export type LocalEngineName = "kokoro" | "pico" | "espeak";

/** What a process has: the local engines that loaded (eSpeak always does) and the cloud keys set. */
export interface EnginesLoaded {
  kokoro?: boolean;
  pico?: boolean;
  openai?: boolean;
  azure?: boolean;
}

export const NEURAL: Readonly<Record<EngineName, boolean>> = Object.freeze({ kokoro: true, pico: false, espeak: false, openai: true, azure: true });

export type KokoroVoice = (typeof KOKORO_VOICE_NAMES)[number];

/**
 * The spec's English voices on Kokoro: the Kokoro voice of the same name and character. Kokoro
 * has no "shimmer": af_heart, its most refined American female voice (the one the issue's
 * intelligibility measure used), stands in for OpenAI's bright female voice.
 */
export const KOKORO_FOR_SPEC: Readonly<Record<string, KokoroVoice>> = Object.freeze({
  alloy: "af_alloy",
  echo: "am_echo",
  fable: "bm_fable",
  onyx: "am_onyx",
  nova: "af_nova",
  shimmer: "af_heart",
});

// Slot for the German engine: the locales whose voices Pico reads once it is loaded
// (services/audio/engine/pico/). Pico has one German voice; how it speaks each of our German
// voice names is that engine's choice.
export const PICO_LANGS: readonly Lang[] = ["de-DE"];

const KOKORO_SET = new Set<string>(KOKORO_VOICE_NAMES);

export function isKokoroVoice(name: string): name is KokoroVoice {
  return KOKORO_SET.has(name);
}

/** The accent a Kokoro voice was trained on: its name's first letter (a: American, b: British). */
export function kokoroAccent(voice: KokoroVoice): "en-US" | "en-GB" {
  return voice.startsWith("b") ? "en-GB" : "en-US";
}

/** "female" or "male", from a Kokoro voice's second letter. */
export function kokoroSex(voice: KokoroVoice): "female" | "male" {
  return voice[1] === "f" ? "female" : "male";
}

/** The Kokoro voice that reads `voice` in `lang`, or undefined (Kokoro speaks English only; en-GB in its British voices). */
export function kokoroVoiceFor(voice: string, lang: string): KokoroVoice | undefined {
  if (lang === "en-GB") return isKokoroVoice(voice) && kokoroAccent(voice) === "en-GB" ? voice : undefined;
  if (lang !== "en-US") return undefined;
  return isKokoroVoice(voice) ? voice : KOKORO_FOR_SPEC[voice];
}

/** The local engine that reads `voice` in `lang` with what is loaded: the best one that can. */
export function localEngineFor(voice: string, lang: string, loaded: EnginesLoaded): LocalEngineName {
  if (loaded.kokoro && kokoroVoiceFor(voice, lang)) return "kokoro";
  if (loaded.pico && (PICO_LANGS as readonly string[]).includes(lang) && voiceInfo(voice)) return "pico";
  return "espeak";
}

/** The engine that speaks `voice` in `lang`: its cloud provider when that key is set, else the best loaded local engine. */
export function engineFor(voice: string, lang: string, loaded: EnginesLoaded): EngineName {
  const own = voiceInfo(voice)?.provider;
  if (own === "openai" && loaded.openai) return "openai";
  if (own === "azure" && loaded.azure) return "azure";
  return localEngineFor(voice, lang, loaded);
}

export interface CatalogVoice {
  name: string;
  /** Locales the API accepts with this voice. */
  langs: readonly Lang[];
  /** The engine whose voice this is (its own, when everything is configured). */
  engine: EngineName;
  neural: boolean;
  /** Whether that engine is there now (a cloud key set, a local model loaded). */
  available: boolean;
  /** Per accepted locale, the engine that speaks it right now. */
  speaks: Partial<Record<Lang, EngineName>>;
  /** For Kokoro's own voices: the accent it reads with. */
  accent?: "en-US" | "en-GB";
}

function ownEngine(name: string): EngineName {
  const provider = voiceInfo(name)?.provider;
  if (provider === "openai" || provider === "azure") return provider;
  return isKokoroVoice(name) ? "kokoro" : "espeak";
}

/** Every voice the API accepts, with its engines as they are in a process that has `loaded`. */
export function voiceCatalog(loaded: EnginesLoaded): CatalogVoice[] {
  return VOICES.map((v) => {
    const engine = ownEngine(v.name);
    const available = engine === "espeak" || !!loaded[engine];
    const speaks = Object.fromEntries(v.langs.map((lang) => [lang, engineFor(v.name, lang, loaded)])) as CatalogVoice["speaks"];
    return { name: v.name, langs: v.langs, engine, neural: NEURAL[engine], available, speaks, ...(isKokoroVoice(v.name) ? { accent: kokoroAccent(v.name) } : {}) };
  });
}
