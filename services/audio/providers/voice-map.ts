// Which voice a fallback provider uses in place of the article's voice: same
// language, similar character.
//
//   OpenAI → Azure:  nova, shimmer, alloy → de-DE-KatjaNeural (de-DE) / en-US-JennyNeural (en-US)
//                    echo, onyx, fable    → de-DE-ConradNeural (de-DE) / en-US-GuyNeural (en-US)
//   Azure → OpenAI:  de-DE-KatjaNeural → nova,  de-DE-ConradNeural → onyx
//   Kokoro's own voices (af_heart, bm_george, ...) → the cloud voice of their sex, as above
//   → local:         the article's own voice (every local engine reads every voice in the table;
//                    which one does is services/audio/engine/catalog.ts)
import { voiceInfo, type Lang, type ProviderName } from "../../../lib/voices.js";
import { isKokoroVoice, kokoroSex } from "../engine/catalog.js";

type Character = "female" | "male";

const OPENAI_CHARACTER: Record<string, Character> = {
  nova: "female",
  shimmer: "female",
  alloy: "female",
  echo: "male",
  onyx: "male",
  fable: "male",
};

const AZURE_CHARACTER: Record<string, Character> = {
  "de-DE-KatjaNeural": "female",
  "de-DE-ConradNeural": "male",
  "en-US-JennyNeural": "female",
  "en-US-GuyNeural": "male",
  "en-GB-SoniaNeural": "female",
  "en-GB-RyanNeural": "male",
};

const AZURE_VOICE: Record<Lang, Record<Character, string>> = {
  "de-DE": { female: "de-DE-KatjaNeural", male: "de-DE-ConradNeural" },
  "en-US": { female: "en-US-JennyNeural", male: "en-US-GuyNeural" },
  "en-GB": { female: "en-GB-SoniaNeural", male: "en-GB-RyanNeural" },
};

const OPENAI_VOICE: Record<Character, string> = { female: "nova", male: "onyx" };

function character(voice: string): Character | undefined {
  return OPENAI_CHARACTER[voice] ?? AZURE_CHARACTER[voice] ?? (isKokoroVoice(voice) ? kokoroSex(voice) : undefined);
}

/** The voice `provider` should use for an article in `voice`/`lang`; undefined when it has none. */
export function mapVoice(voice: string, lang: Lang, provider: ProviderName): string | undefined {
  if (provider === "local") return voiceInfo(voice) ? voice : undefined;
  const own = voiceInfo(voice)?.provider;
  if (own === provider) return voice;
  const c = character(voice);
  if (!c) return undefined;
  return provider === "azure" ? AZURE_VOICE[lang]?.[c] : OPENAI_VOICE[c];
}
