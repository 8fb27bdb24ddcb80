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
    model: () => `${engine.name}/${engine.format.sampleRate}/${engine.format.bitrate}`,
    async synthesize(req, signal) {
      try {
        return await engine.synthesize({ text: req.text, voice: req.voice, lang: req.lang }, signal);
      } catch (e) {
        if (signal.aborted) throw signal.reason;
        if (e instanceof SpeechInputError) throw new ProviderError(e.message, false);
        throw new ProviderError((e as Error).message ?? String(e), true);
      }
    },
  };
}
