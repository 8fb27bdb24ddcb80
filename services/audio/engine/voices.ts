import { checkVoiceLang } from "../../../lib/voices.js";
import { isKokoroVoice, KOKORO_FOR_SPEC, kokoroSex } from "./catalog.js";
import { ENCODER_PEAK_MARGIN_DB } from "../loudness/limiter.js";
import { defusePhonemes } from "./text.js";
import { SpeechInputError, type SpeechRequest } from "./types.js";

/** How one of our voice names sounds in eSpeak: base voice + variant, pitch (0-99), words per minute. */
export interface EspeakVoice {
  name: string; // e.g. "en-us+f3"
  pitch: number;
  rate: number;
  /** Linear gain applied to the PCM before encoding, and the peak ceiling (linear, full scale 1) of the limiter; ceiling 0: no leveling. */
  gain: number;
  ceiling: number;
}

interface Profile {
  variant: string;
  pitch: number;
  rate: number;
  /** Integrated loudness (LUFS) of this voice's raw eSpeak output on news prose, measured with ffmpeg's ebur128 filter. */
  lufs: number;
}

// Each name gets its own variant, pitch and pace so listeners can tell them apart; the
// male/female variants follow how the cloud voice of the same name is commonly perceived.
// Paces differ by at least 8 words per minute, which also makes voices measurably different
// (eSpeak adds random noise, so the same request never gives byte-identical audio).
const PROFILES: Record<string, Profile> = {
  alloy: { variant: "f5", pitch: 50, rate: 170, lufs: -21.15 },
  echo: { variant: "m3", pitch: 42, rate: 160, lufs: -21.6 },
  fable: { variant: "m2", pitch: 55, rate: 186, lufs: -22.95 },
  onyx: { variant: "m7", pitch: 30, rate: 150, lufs: -21.0 },
  nova: { variant: "f3", pitch: 62, rate: 195, lufs: -20.6 },
  shimmer: { variant: "f4", pitch: 72, rate: 178, lufs: -18.85 },
  "de-DE-ConradNeural": { variant: "m1", pitch: 45, rate: 158, lufs: -22.75 },
  "de-DE-KatjaNeural": { variant: "f2", pitch: 60, rate: 172, lufs: -19.0 },
};

/** The eSpeak profile of a voice: its own, or for a Kokoro voice (read by eSpeak when Kokoro is not loaded) the spec voice it stands for, else one of its sex. */
function profileOf(voice: string): Profile | undefined {
  if (PROFILES[voice]) return PROFILES[voice];
  if (!isKokoroVoice(voice)) return undefined;
  const spec = Object.keys(KOKORO_FOR_SPEC).find((name) => KOKORO_FOR_SPEC[name] === voice);
  return PROFILES[spec ?? (kokoroSex(voice) === "female" ? "alloy" : "echo")];
}

const BASE: Record<SpeechRequest["lang"], string> = { "en-US": "en-us", "en-GB": "en-gb", "de-DE": "de" };

const DEFAULT_LEVEL = { lufs: -19, truePeak: -1 };

export function espeakVoice(voice: string, lang: string, level: { lufs: number; truePeak: number } | null = DEFAULT_LEVEL): EspeakVoice {
  const problem = checkVoiceLang(voice, lang);
  if (problem) throw new SpeechInputError(problem);
  const profile = profileOf(voice);
  const base = BASE[lang as SpeechRequest["lang"]];
  if (!profile || !base) throw new SpeechInputError(`The local engine has no voice for '${voice}' in '${lang}'`);
  return {
    name: `${base}+${profile.variant}`,
    pitch: profile.pitch,
    rate: profile.rate,
    gain: level ? Math.pow(10, (level.lufs - profile.lufs) / 20) : 1,
    ceiling: level ? Math.pow(10, (level.truePeak - ENCODER_PEAK_MARGIN_DB) / 20) : 0,
  };
}

/** Validates a request and returns its text and eSpeak voice; throws SpeechInputError on bad input. */
export function prepare(req: SpeechRequest): { text: string; voice: EspeakVoice } {
  if (!req || typeof req !== "object") throw new SpeechInputError("A speech request object is required");
  if (typeof req.text !== "string") throw new SpeechInputError("Speech text must be a string");
  // Empty text is rejected rather than turned into silence: it almost always means the caller's
  // chunking went wrong, and pauses have their own call (silence()).
  if (req.text.trim() === "") throw new SpeechInputError("Speech text is empty");
  return { text: defusePhonemes(req.text), voice: espeakVoice(req.voice, req.lang, req.level === undefined ? DEFAULT_LEVEL : req.level) };
}
