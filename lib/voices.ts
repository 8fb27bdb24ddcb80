// The spec's voice table: which voices exist, which locales each accepts,
// and which provider speaks it when that provider is configured. Which local
// engine speaks a voice (Kokoro, Pico, eSpeak) is services/audio/engine/catalog.ts.
export type Lang = "en-US" | "en-GB" | "de-DE";
export type ProviderName = "openai" | "azure" | "local";

export interface VoiceInfo {
  name: string;
  langs: readonly Lang[];
  /** The provider whose voice it is: a cloud one, or "local" for the offline engines' own voices. */
  provider: ProviderName;
}

/** Every locale the API accepts. */
export const LANGS: readonly Lang[] = ["de-DE", "en-GB", "en-US"];
/** The locales of the spec's voices (OpenAI's and, for German, Azure's). */
export const SPEC_LANGS: readonly Lang[] = ["de-DE", "en-US"];

/**
 * Kokoro-82M's English voices (the style vectors of kokoro-js 1.2.1), selectable by their own
 * names. The prefix says accent and sex: a = American, b = British; f = female, m = male. The
 * American voices speak en-US, the British ones en-GB (and en-US, as they did before en-GB was a
 * locale: they read it with British pronunciation all the same).
 */
export const KOKORO_VOICE_NAMES = [
  "af_alloy", "af_aoede", "af_bella", "af_heart", "af_jessica", "af_kore", "af_nicole", "af_nova", "af_river", "af_sarah", "af_sky",
  "am_adam", "am_echo", "am_eric", "am_fenrir", "am_liam", "am_michael", "am_onyx", "am_puck", "am_santa",
  "bf_alice", "bf_emma", "bf_isabella", "bf_lily",
  "bm_daniel", "bm_fable", "bm_george", "bm_lewis",
] as const;

export const VOICES: readonly VoiceInfo[] = [
  ...["echo", "fable", "alloy", "onyx", "nova", "shimmer"].map((name) => ({ name, langs: SPEC_LANGS, provider: "openai" as const })),
  { name: "de-DE-ConradNeural", langs: ["de-DE"], provider: "azure" },
  { name: "de-DE-KatjaNeural", langs: ["de-DE"], provider: "azure" },
  ...KOKORO_VOICE_NAMES.map((name) => ({ name, langs: name.startsWith("b") ? (["en-GB", "en-US"] as const) : (["en-US"] as const), provider: "local" as const })),
];

export const VOICE_NAMES = VOICES.map((v) => v.name);

const BY_NAME = new Map(VOICES.map((v) => [v.name, v]));

export function voiceInfo(name: string): VoiceInfo | undefined {
  return BY_NAME.get(name);
}

/** Null when the pair is valid, otherwise a message for the publisher. */
export function checkVoiceLang(voice: string, lang: string): string | null {
  const v = voiceInfo(voice);
  if (!v) return `Unknown voice '${voice}'; one of: ${VOICE_NAMES.join(", ")}`;
  if (!(v.langs as readonly string[]).includes(lang)) return `Voice '${voice}' does not speak '${lang}'; allowed: ${v.langs.join(", ")}`;
  return null;
}

export const DEFAULT_VOICE = "alloy";
export const DEFAULT_LANG: Lang = "en-US";
