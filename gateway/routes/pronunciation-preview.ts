// POST /api/pronunciations/preview: a short sample sentence spoken with one
// pronunciation rule, answered as MP3, so a publisher can hear a rule before
// saving it (the console's "Listen" button). Full token. The audio service's
// ad-hoc Synthesize renders it, so it is charged and limited like any
// synthesis (one of the daily articles, the characters from the credit;
// ResourceExhausted is a 429 as everywhere else).
//
// The rule travels in Synthesize's `pronunciations` and the audio service
// renders it as it renders an article's rules (services/audio/text/pronounce.ts,
// IPA as phonemes where the engine reads them), so the sample cannot drift from
// what the platform does with the rule once it is saved. Nothing is substituted here.
import type { Client } from "@connectrpc/connect";
import type { Router } from "@koa/router";
import type { Context } from "koa";
import type { AudioService } from "../../gen/audio/v1/audio_pb.js";
import type { BlobStore } from "../../lib/blob/port.js";
import { cleanRule, pronunciationProblem, rulesForLang, type PronunciationRule } from "../../lib/pronunciations.js";
import { ruleToProto } from "../../lib/rpc/pronunciations.js";
import { bearerTokenOf } from "../../lib/rpc/caller.js";
import { CHARACTERS_KEYWORD, NOT_BLANK, UNSAFE_TEXT_MESSAGE } from "../../lib/text-rules.js";
import { DEFAULT_VOICE, VOICES } from "../../lib/voices.js";
import { readJsonBody } from "../body.js";
import { HttpError } from "../errors.js";
import { PronunciationRuleSchema, requestValidator, VoiceLangRule } from "../schemas.js";

type Schema = Record<string, unknown>;
import type { WriterCheck } from "../writer-check.js";

export const PREVIEW_TEXT_MAX = 200;

export const PronunciationPreviewRequest: Schema = {
  type: "object",
  required: ["rule"],
  description: "One rule and, optionally, the sentence to speak it in and the voice. " + "Unknown fields are ignored (neither stored nor rejected).",
  properties: {
    rule: PronunciationRuleSchema,
    text: {
      type: "string",
      minLength: 1,
      maxLength: PREVIEW_TEXT_MAX,
      // As an article's text: not blank, no characters XML 1.0 cannot carry.
      allOf: [
        { pattern: NOT_BLANK, "x-error-message": "must not be blank (whitespace only)" },
        { [CHARACTERS_KEYWORD]: "text", "x-error-message": UNSAFE_TEXT_MESSAGE },
      ],
      description: "The sample sentence (should contain the rule's match), not blank, no control characters other than tab and line breaks, no unpaired surrogates, U+FFFE or U+FFFF. Default: a short sentence with the match in the voice's language.",
    },
    voice: { type: "string", enum: VOICES.map((v) => v.name), description: "Voice name; sent together with lang. Default: the platform's default voice." },
    lang: { type: "string", enum: [...new Set(VOICES.flatMap((v) => v.langs))], description: "Locale; sent together with voice. Default: the rule's language, else en-US." },
  },
  allOf: [VoiceLangRule],
};

export const PREVIEW_SCHEMAS = { PronunciationPreviewRequest } as const;

const check = requestValidator(PronunciationPreviewRequest, "body");

interface PreviewBody {
  rule: PronunciationRule;
  text?: string;
  voice?: string;
  lang?: string;
}

export function defaultSample(match: string, lang: string): string {
  return lang.startsWith("de") ? `So klingt ${match} in einem Satz: ${match}.` : `This is how ${match} sounds in a sentence: ${match}.`;
}

export interface PronunciationPreviewOptions {
  audio: Client<typeof AudioService>;
  blobs: BlobStore;
  maxBodyBytes: number;
  checkWriter?: WriterCheck;
}

export function pronunciationPreviewRoutes(router: Router, opts: PronunciationPreviewOptions): void {
  router.post("/api/pronunciations/preview", async (ctx: Context) => {
    const authorization = ctx.get("Authorization");
    bearerTokenOf(authorization);
    await opts.checkWriter?.(authorization);
    const body = await readJsonBody(ctx, Math.min(opts.maxBodyBytes, 64 * 1024));
    // The rule first, with the same checks and messages as PUT /api/pronunciations ("rule.<field>: …").
    const rule = body && typeof body === "object" && !Array.isArray(body) ? (body as Record<string, unknown>).rule : undefined;
    if (rule === undefined) throw new HttpError(400, "rule: is required");
    const problem = pronunciationProblem([rule]);
    if (problem) throw new HttpError(400, problem.replace(/^pronunciations\[0\]/, "rule"));
    check(body);
    const b = body as PreviewBody;
    const lang = b.lang ?? (b.rule.lang?.startsWith("de") ? "de-DE" : "en-US");
    const voice = b.voice ?? DEFAULT_VOICE;
    // An article in another language would not apply the rule, so neither would this sample:
    // say so rather than play a sentence the rule does not touch.
    if (rulesForLang([b.rule], lang).length === 0) throw new HttpError(400, `rule.lang: the rule is for '${b.rule.lang}' only and the sample is read in '${lang}'; choose a voice and lang of the rule's language`);
    const text = b.text ?? defaultSample(b.rule.match, lang);
    const res = await opts.audio.synthesize(
      { title: "", text, voice, lang, isRaw: false, parse: false, pronunciations: [ruleToProto(cleanRule(b.rule))] },
      { headers: { authorization, "x-request-id": ctx.state.requestId as string } },
    );
    const key = res.full?.key;
    if (!key) throw new HttpError(502, "The audio service answered without audio");
    const info = await opts.blobs.stat(key);
    if (!info) throw new HttpError(502, "The rendered sample is not in the audio store");
    ctx.set("Cache-Control", "no-store");
    ctx.set("X-Audio-Duration", String(Math.round((res.full?.duration ?? 0) * 1000) / 1000));
    ctx.type = "audio/mpeg";
    ctx.length = info.size;
    ctx.body = await opts.blobs.read(key);
  });
}
