// OpenAI speech API: POST {base}/audio/speech, JSON in, MP3 out.
import { respellMarks } from "../text/pronounce.js";
import { postForMp3 } from "./http.js";
import type { ProviderRequest, SpeechProvider } from "./types.js";

export interface OpenAiOptions {
  apiKey: string;
  /** Default https://api.openai.com/v1 */
  baseUrl?: string;
  /** Model for articles without a prompt. Default "tts-1". */
  model?: string;
  timeoutMs?: number;
}

/** The documented input limit of /audio/speech. */
export const OPENAI_MAX_CHARS = 4096;
/** The only speech model that follows `instructions`. */
export const OPENAI_PROMPT_MODEL = "gpt-4o-mini-tts";

export function createOpenAiProvider(opts: OpenAiOptions): SpeechProvider {
  if (!opts.apiKey) throw new Error("OpenAI provider: an API key is required");
  const url = `${(opts.baseUrl ?? "https://api.openai.com/v1").replace(/\/+$/, "")}/audio/speech`;
  const plainModel = opts.model ?? "tts-1";
  const model = (req: ProviderRequest) => (req.prompt ? OPENAI_PROMPT_MODEL : plainModel);
  return {
    name: "openai",
    maxChars: OPENAI_MAX_CHARS,
    usesPrompt: true,
    model,
    async synthesize(req, signal, onData) {
      // No phoneme input: pronunciation rules become their respelling (an IPA rule its `say`, else the word).
      const input = respellMarks(req.text, req.pronunciations, req.lang);
      if (input.length > OPENAI_MAX_CHARS) throw new RangeError(`OpenAI input is limited to ${OPENAI_MAX_CHARS} characters, got ${input.length}`);
      const body: Record<string, string> = { model: model(req), voice: req.voice, input, response_format: "mp3" };
      if (req.prompt) body.instructions = req.prompt;
      return postForMp3(
        {
          provider: "openai",
          url,
          headers: { authorization: `Bearer ${opts.apiKey}`, "content-type": "application/json", accept: "audio/mpeg" },
          body: JSON.stringify(body),
          timeoutMs: opts.timeoutMs ?? 90_000,
          secrets: [opts.apiKey],
        },
        signal,
        onData,
      );
    },
  };
}
