// How each of our voice names sounds on Pico. Pico has one German voice, a female one; a male
// voice is that voice lowered in pitch with Pico's own markup. Measured (docs/voices.md): at 70 %
// pitch its median F0 is ~115 Hz (against ~167 Hz), in the male range, and Whisper-base
// transcribed this engine's MP3 of a German news text at 5.2 % WER, as for Katja, against 19.0 %
// for eSpeak's male German on the same text: the male voices stay on Pico.
import { checkVoiceLang, voiceInfo } from "../../../../lib/voices.js";
import { ENCODER_PEAK_MARGIN_DB } from "../../loudness/limiter.js";
import { SpeechInputError, type SpeechRequest } from "../types.js";

/** What the worker needs to speak one request: Pico markup levels and the leveller's settings. */
export interface PicoVoice {
  /** Pico's <pitch level>, percent of its natural pitch. */
  pitch: number;
  /** Pico's <speed level>, percent of its natural pace. */
  speed: number;
  /** Linear gain before encoding and the limiter's peak ceiling (linear, full scale 1); ceiling 0: no levelling. */
  gain: number;
  ceiling: number;
}

// Pico's own output clips (hundreds of samples at full scale per sentence at its default
// volume); at 40 % it peaks ~2.4 dB under full scale and reads about -19.4 LUFS on news prose
// (ffmpeg ebur128), so the leveller has little left to do.
export const PICO_VOLUME = 40;
export const PICO_LUFS = -19.4;

const FEMALE = { pitch: 100, speed: 100 };
const MALE = { pitch: 70, speed: 100 };

// Small differences in pitch and pace so that listeners can tell the names apart, as the eSpeak
// profiles do; the German names are the plain voices.
const PROFILES: Record<string, { pitch: number; speed: number }> = {
  "de-DE-KatjaNeural": FEMALE,
  "de-DE-ConradNeural": MALE,
  alloy: { pitch: 95, speed: 100 },
  nova: { pitch: 106, speed: 104 },
  shimmer: { pitch: 110, speed: 100 },
  echo: { pitch: 76, speed: 100 },
  fable: { pitch: 74, speed: 106 },
  onyx: { pitch: 66, speed: 96 },
};

const DEFAULT_LEVEL = { lufs: -19, truePeak: -1 };

/** The Pico voice for a request; SpeechInputError when the pair is invalid or not German. */
export function picoVoice(voice: string, lang: string, level: SpeechRequest["level"] = DEFAULT_LEVEL): PicoVoice {
  const problem = checkVoiceLang(voice, lang);
  if (problem) throw new SpeechInputError(problem);
  if (lang !== "de-DE") throw new SpeechInputError(`The Pico engine speaks de-DE only, not '${lang}'`);
  const profile = PROFILES[voice] ?? (voiceInfo(voice) ? FEMALE : undefined);
  if (!profile) throw new SpeechInputError(`The Pico engine has no voice for '${voice}'`);
  return {
    ...profile,
    gain: level ? Math.pow(10, (level.lufs - PICO_LUFS) / 20) : 1,
    ceiling: level ? Math.pow(10, (level.truePeak - ENCODER_PEAK_MARGIN_DB) / 20) : 0,
  };
}

/**
 * Article text as Pico reads it: Pico takes "<...>" as markup, so angle brackets become spaces;
 * our private-use marks go (a pronunciation rule's eSpeak phonemes stay as plain letters, which
 * Pico reads as a word: the nearest it can do without eSpeak's phoneme set).
 */
export function picoText(text: string, voice: PicoVoice): string {
  const plain = text.replace(/[<>]/g, " ").replace(/[\uF8F0-\uF8FF]/g, "");
  return `<volume level='${PICO_VOLUME}'><pitch level='${voice.pitch}'><speed level='${voice.speed}'>${plain}</speed></pitch></volume>`;
}
