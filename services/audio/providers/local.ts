// The offline engine as a provider: always configured, the end of every fallback chain.
import { SpeechInputError, type SpeechEngine } from "../engine/index.js";
import { ProviderError } from "./errors.js";
import type { PronunciationRule } from "../../../lib/pronunciations.js";
import { ipaToEspeak, PHONEMES_CLOSE, PHONEMES_OPEN, renderMarks, respelling } from "../text/pronounce.js";
import type { SpeechProvider } from "./types.js";

/**
 * Pronunciation marks as the local engine reads them: an IPA rule as eSpeak
 * phoneme input where the engine takes it (the native program; the WASM build
 * reads text only) and the IPA converts, otherwise the respelling.
 */
export function engineText(text: string, rules: readonly PronunciationRule[] | undefined, lang: string, phonemes: boolean): string {
  return renderMarks(text, rules, (rule) => {
    const espeak = phonemes && rule.ipa !== undefined ? ipaToEspeak(rule.ipa) : undefined;
    return espeak ? `${PHONEMES_OPEN}${espeak}${PHONEMES_CLOSE}` : respelling(rule, lang);
  });
}

/** Whether the engine reads eSpeak phoneme input ("[[...]]"). */
export const takesPhonemes = (engine: Pick<SpeechEngine, "name">) => engine.name === "local-native";

export function localProvider(engine: SpeechEngine, maxChars = 300): SpeechProvider {
  return {
    name: "local",
    label: engine.name,
    maxChars,
    concurrency: engine.concurrency,
    usesPrompt: false,
    // The level is baked into the PCM, so it is part of what a cached chunk is.
    model: (req) => `${engine.name}/${engine.format.sampleRate}/${engine.format.bitrate}${req.level ? `/${req.level.lufs}/${req.level.truePeak}` : ""}`,
    async synthesize(req, signal) {
      try {
        const text = engineText(req.text, req.pronunciations, req.lang, takesPhonemes(engine));
        return await engine.synthesize({ text, voice: req.voice, lang: req.lang, level: req.level }, signal);
      } catch (e) {
        if (signal.aborted) throw signal.reason;
        if (e instanceof SpeechInputError) throw new ProviderError(e.message, false);
        throw new ProviderError((e as Error).message ?? String(e), true);
      }
    },
  };
}
