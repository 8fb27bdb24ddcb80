// The voice of an article created without voice and lang: the project's default voice in the
// language the text is written in (lib/lang-detect.ts). A language no voice speaks is read by the
// project's default voice as it is, and the publisher is told so (`warning`).
import { detectWith, languageName, loadLanguageDetector } from "../../lib/lang-detect.js";
import type { Logger } from "../../lib/log.js";
import { checkVoiceLang, DEFAULT_VOICE } from "../../lib/voices.js";

export interface VoiceChoice {
  voice: string;
  lang: string;
  /** Why the article is not read in its own language; absent when it is (or none could be told). */
  warning?: string;
}

/**
 * `fallback`: the project's default voice and lang. Text too short or too mixed to tell keeps it
 * without a warning: nothing was found out that it contradicts.
 */
export async function voiceForText(
  fallback: { voice: string; lang: string },
  title: string,
  text: string,
  html: boolean,
  log?: Logger,
  /** Where the detection (synchronous work of a few milliseconds) waits for its turn; default: at once. */
  turn?: <T>(step: () => T) => Promise<T>,
): Promise<VoiceChoice> {
  let found;
  try {
    const detector = await loadLanguageDetector();
    const detect = () => detectWith(detector, title, text, html);
    found = turn ? await turn(detect) : detect();
  } catch (err) {
    // The detector's files are part of the install; without them an article is still created, as before detection.
    log?.warn({ err }, "language detection failed; the default voice reads the article");
  }
  if (!found) return fallback;
  if (!found.locale) {
    return {
      ...fallback,
      warning: `The text reads as ${languageName(found.language)} (${found.language}), which no voice speaks; the default voice ${fallback.voice} (${fallback.lang}) reads it. Send voice and lang to choose.`,
    };
  }
  // The project's own locale of that language (en-GB for an English text) stays.
  if (found.language === fallback.lang.split("-")[0]) return fallback;
  // The project's voice when it speaks that language too, else the platform's default voice.
  if (checkVoiceLang(fallback.voice, found.locale) === null) return { voice: fallback.voice, lang: found.locale };
  return { voice: DEFAULT_VOICE, lang: found.locale };
}
