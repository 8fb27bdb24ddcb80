// GET /api/voices: every voice the API accepts, with the engine that speaks it and whether that
// engine is there now, as the audio service sees it (its ListVoices: only the audio workers know
// which models loaded and which cloud keys are set). GET /api/voices/{voice}/sample: a short
// fixed sentence in that voice, rendered by the audio service (VoiceSample) on its first request
// and then kept by it, one per voice, locale and engine. Any valid token; the sample
// is not charged, its text being the platform's.
import type { Client } from "@connectrpc/connect";
import type { Router } from "@koa/router";
import type { Context } from "koa";
import type { AudioService } from "../../gen/audio/v1/audio_pb.js";
import { bearerTokenOf } from "../../lib/rpc/caller.js";
import { LANGS, VOICE_NAMES } from "../../lib/voices.js";
import { HttpError } from "../errors.js";
import { baseOf } from "../public-links.js";
import { requestValidator } from "../schemas.js";

type Schema = Record<string, unknown>;

const ENGINES = ["kokoro", "pico", "espeak", "openai", "azure"];

export const VoiceEntry: Schema = {
  type: "object",
  additionalProperties: false,
  required: ["name", "langs", "engine", "neural", "available", "speaks", "samples"],
  properties: {
    name: { type: "string", description: "The voice name articles are created with." },
    langs: { type: "array", items: { type: "string", enum: [...LANGS] }, description: "Locales the voice accepts." },
    engine: { type: "string", enum: ENGINES, description: "The engine whose voice this is: a cloud provider's (openai, azure) or a local one (kokoro, pico, espeak)." },
    neural: { type: "boolean", description: "Whether that engine is a neural one (kokoro, openai, azure)." },
    available: { type: "boolean", description: "Whether that engine is there now: its cloud key is set, or its model files loaded. When not, another engine reads the voice (see speaks)." },
    speaks: {
      type: "object",
      additionalProperties: { type: "string", enum: ENGINES },
      description: "Per accepted locale, the engine that reads articles in this voice right now.",
    },
    samples: {
      type: "object",
      additionalProperties: { type: "string", format: "uri" },
      description: "Per accepted locale, the URL of a short sample (MP3) as the voice sounds now; it needs a token like this list.",
    },
  },
};

export const VoiceList: Schema = {
  type: "object",
  additionalProperties: false,
  required: ["result", "voices"],
  properties: { result: { type: "string", const: "ok" }, voices: { type: "array", items: VoiceEntry } },
  examples: [
    {
      result: "ok",
      voices: [
        {
          name: "de-DE-KatjaNeural",
          langs: ["de-DE"],
          engine: "azure",
          neural: true,
          available: false,
          speaks: { "de-DE": "pico" },
          samples: { "de-DE": "https://audio.example.com/api/voices/de-DE-KatjaNeural/sample?lang=de-DE" },
        },
      ],
    },
  ],
};

export const VoiceSampleQuery: Schema = {
  type: "object",
  required: ["lang"],
  properties: { lang: { type: "string", enum: [...LANGS], description: "Locale of the sample: one the voice accepts." } },
};

export const VOICE_SCHEMAS = { VoiceList, VoiceEntry } as const;

const checkQuery = requestValidator(VoiceSampleQuery, "query");

/**
 * How long a sample request waits for its first render, against the 30 s of other calls. Local
 * engines render below the service's priority, so on a machine busy with other work one sentence
 * can take longer than 30 s (seen in CI: a 504 for a Kokoro sample beside a test run), while the
 * wait costs nothing but an open request. Below the server's 120 s request timeout.
 */
export const SAMPLE_WAIT_MS = 90_000;

export interface VoicesRouteOptions {
  audio: Client<typeof AudioService>;
  publicBaseUrl?: string;
}

export function voicesRoutes(router: Router, opts: VoicesRouteOptions): void {
  const call = (ctx: Context) => {
    const authorization = ctx.get("Authorization");
    bearerTokenOf(authorization);
    return { headers: { authorization, "x-request-id": ctx.state.requestId as string } };
  };

  router.get("/api/voices", async (ctx) => {
    const res = await opts.audio.listVoices({}, call(ctx));
    const base = baseOf(ctx, opts.publicBaseUrl);
    ctx.body = {
      result: "ok",
      voices: res.voices.map((v) => ({
        name: v.name,
        langs: v.langs,
        engine: v.engine,
        neural: v.neural,
        available: v.available,
        speaks: v.speaks,
        samples: Object.fromEntries(v.langs.map((lang) => [lang, `${base}/api/voices/${encodeURIComponent(v.name)}/sample?lang=${lang}`])),
      })),
    };
  });

  router.get("/api/voices/:voice/sample", async (ctx) => {
    const c = call(ctx);
    const query: Record<string, unknown> = { ...ctx.query };
    checkQuery(query);
    const lang = query.lang as string;
    const name = ctx.params.voice;
    if (!VOICE_NAMES.includes(name)) throw new HttpError(404, `voice: no voice named '${name}'`);
    // The engine that speaks it now is part of the key: a sample never outlives a change of engine.
    const listed = (await opts.audio.listVoices({}, c)).voices.find((v) => v.name === name);
    if (!listed?.langs.includes(lang)) throw new HttpError(400, `lang: ${name} does not speak '${lang}'; it speaks ${listed?.langs.join(", ") ?? "nothing here"}`);
    // Rendered once per voice, locale and engine, and kept, by the audio service (voice-status.ts).
    const sample = await opts.audio.voiceSample({ voice: name, lang }, { ...c, timeoutMs: SAMPLE_WAIT_MS });
    ctx.set("Cache-Control", "private, max-age=3600");
    ctx.set("X-Voice-Engine", sample.engine);
    ctx.type = "audio/mpeg";
    ctx.body = Buffer.from(sample.mp3);
  });
}
