// The offline engine as a provider: always configured, the end of every fallback chain.
import { SpeechInputError, type SpeechEngine } from "../engine/index.js";
import { ProviderError } from "./errors.js";
import type { SpeechProvider } from "./types.js";

export function localProvider(engine: SpeechEngine, maxChars = 300): SpeechProvider {
  return {
    name: "local",
    label: engine.name,
    maxChars,
    usesPrompt: false,
    // The level is baked into the PCM, so it is part of what a cached chunk is.
    model: (req) => `${engine.name}/${engine.format.sampleRate}/${engine.format.bitrate}${req.level ? `/${req.level.lufs}/${req.level.truePeak}` : ""}`,
    async synthesize(req, signal) {
      try {
        return await engine.synthesize({ text: req.text, voice: req.voice, lang: req.lang, level: req.level }, signal);
      } catch (e) {
        if (signal.aborted) throw signal.reason;
        if (e instanceof SpeechInputError) throw new ProviderError(e.message, false);
        throw new ProviderError((e as Error).message ?? String(e), true);
      }
    },
  };
}
