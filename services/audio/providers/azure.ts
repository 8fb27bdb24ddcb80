// Azure Speech text to speech (REST): SSML in, MP3 out.
//
// Limits we keep (Azure documents 64 KB of SSML and 10 minutes of audio per request):
// at most 3,000 characters of text per request. Escaping grows the text at most
// sixfold ("&quot;"), so a request stays under ~18 KB of SSML, and 3,000 characters
// are about 3.5 minutes of speech at a typical 14 characters per second.
import type { PronunciationRule } from "../../../lib/pronunciations.js";
import { escapeXml } from "../../../lib/xml-text.js";
import { splitMarks } from "../text/pronounce.js";
import { postForMp3 } from "./http.js";
import type { ProviderRequest, SpeechProvider } from "./types.js";

export interface AzureOptions {
  key: string;
  /** e.g. "westeurope"; ignored when `endpoint` is given. */
  region?: string;
  /** Full URL of the cognitiveservices/v1 endpoint (sovereign clouds, private links, tests). */
  endpoint?: string;
  timeoutMs?: number;
}

export const AZURE_MAX_CHARS = 3000;
/** 24 kHz mono 48 kbps, the stream OpenAI sends too. */
export const AZURE_OUTPUT_FORMAT = "audio-24khz-48kbitrate-mono-mp3";

export { escapeXml };

/** A pronunciation rule as SSML: a substitution, letters, or IPA phonemes around the word as written. */
function ruleSsml(rule: PronunciationRule): string {
  const word = escapeXml(rule.match);
  if (rule.ipa !== undefined) return `<phoneme alphabet="ipa" ph="${escapeXml(rule.ipa)}">${word}</phoneme>`;
  if (rule.spell) return `<say-as interpret-as="characters">${word}</say-as>`;
  return `<sub alias="${escapeXml(rule.say ?? rule.match)}">${word}</sub>`;
}

function ssmlText(req: ProviderRequest): string {
  return splitMarks(req.text, req.pronunciations)
    .map((part) => (typeof part === "string" ? escapeXml(part) : ruleSsml(part)))
    .join("");
}

export function buildSsml(req: ProviderRequest): string {
  return `<speak version="1.0" xmlns="http://www.w3.org/2001/10/synthesis" xml:lang="${escapeXml(req.lang)}"><voice name="${escapeXml(req.voice)}">${ssmlText(req)}</voice></speak>`;
}

export function createAzureProvider(opts: AzureOptions): SpeechProvider {
  if (!opts.key) throw new Error("Azure provider: a subscription key is required");
  if (!opts.endpoint && !/^[a-z0-9-]+$/i.test(opts.region ?? "")) throw new Error("Azure provider: a region (letters, digits, '-') or an endpoint is required");
  const url = opts.endpoint ?? `https://${opts.region}.tts.speech.microsoft.com/cognitiveservices/v1`;
  return {
    name: "azure",
    maxChars: AZURE_MAX_CHARS,
    usesPrompt: false,
    model: () => AZURE_OUTPUT_FORMAT,
    async synthesize(req, signal, onData) {
      if (req.text.length > AZURE_MAX_CHARS) throw new RangeError(`Azure input is limited to ${AZURE_MAX_CHARS} characters here, got ${req.text.length}`);
      return postForMp3(
        {
          provider: "azure",
          url,
          headers: {
            "ocp-apim-subscription-key": opts.key,
            "content-type": "application/ssml+xml",
            "x-microsoft-outputformat": AZURE_OUTPUT_FORMAT,
            "user-agent": "article-audio",
          },
          body: buildSsml(req),
          timeoutMs: opts.timeoutMs ?? 90_000,
          secrets: [opts.key],
        },
        signal,
        onData,
      );
    },
  };
}
