// The spec's voice table: which voices exist, which locales each accepts,
// and which provider speaks it when that provider is configured.
export type Lang = "en-US" | "de-DE";
export type ProviderName = "openai" | "azure" | "local";

export interface VoiceInfo {
  name: string;
  langs: readonly Lang[];
  provider: Exclude<ProviderName, "local">;
}

export const LANGS: readonly Lang[] = ["de-DE", "en-US"];

export const VOICES: readonly VoiceInfo[] = [
  ...["echo", "fable", "alloy", "onyx", "nova", "shimmer"].map((name) => ({ name, langs: LANGS, provider: "openai" as const })),
  { name: "de-DE-ConradNeural", langs: ["de-DE"], provider: "azure" },
  { name: "de-DE-KatjaNeural", langs: ["de-DE"], provider: "azure" },
];

export const VOICE_NAMES = VOICES.map((v) => v.name);

export function voiceInfo(name: string): VoiceInfo | undefined {
  return VOICES.find((v) => v.name === name);
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
