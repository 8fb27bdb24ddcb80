// audio.v1.AudioService: voices, text preview and ad-hoc synthesis.
import { randomUUID } from "node:crypto";
import { Code, ConnectError, type HandlerContext, type ServiceImpl } from "@connectrpc/connect";
import { AudioService } from "../../gen/audio/v1/audio_pb.js";
import type { BlobStore } from "../../lib/blob/port.js";
import type { Logger } from "../../lib/log.js";
import { requirePublisher, type Caller, type CallerResolver } from "../../lib/rpc/caller.js";
import { checkVoiceLang, DEFAULT_LANG, DEFAULT_VOICE, LANGS, VOICES } from "../../lib/voices.js";
import { SpeechInputError, type SpeechEngine } from "./engine/index.js";
import { RenderInputError, renderArticle } from "./pipeline.js";
import { prepareText } from "./text/index.js";
import { errorMessage } from "./worker.js";

export interface AudioServiceDeps {
  resolveCaller: CallerResolver;
  blobs: BlobStore;
  engine: SpeechEngine;
  log: Logger;
  chunkConcurrency?: number;
  /** Longest accepted title + text, in characters. */
  maxTextChars?: number;
}

function checkLang(lang: string): string {
  const l = lang || DEFAULT_LANG;
  if (!(LANGS as readonly string[]).includes(l)) throw new ConnectError(`Unsupported lang '${lang}'; one of: ${LANGS.join(", ")}`, Code.InvalidArgument);
  return l;
}

export function audioServiceImpl(deps: AudioServiceDeps): ServiceImpl<typeof AudioService> {
  const maxChars = deps.maxTextChars ?? 200_000;
  const caller = (ctx: HandlerContext): Promise<Caller> => deps.resolveCaller(ctx.requestHeader);
  const checkSize = (title: string, text: string) => {
    if (title.length + text.length > maxChars) throw new ConnectError(`Title and text are too long: at most ${maxChars} characters`, Code.InvalidArgument);
    if (!title.trim() && !text.trim()) throw new ConnectError("Title and text are empty", Code.InvalidArgument);
  };

  return {
    async listVoices(_req, ctx) {
      await caller(ctx);
      return { voices: VOICES.map((v) => ({ name: v.name, langs: [...v.langs], provider: v.provider })) };
    },

    async prepareText(req, ctx) {
      await caller(ctx);
      const lang = checkLang(req.lang);
      checkSize(req.title, req.text);
      return { paragraphs: prepareText({ title: req.title, text: req.text, lang, parse: req.parse, isRaw: req.isRaw }) };
    },

    async synthesize(req, ctx) {
      const who = await caller(ctx);
      if (who.kind !== "internal") requirePublisher(who, "full");
      const voice = req.voice || DEFAULT_VOICE;
      const lang = checkLang(req.lang);
      const bad = checkVoiceLang(voice, lang);
      if (bad) throw new ConnectError(bad, Code.InvalidArgument);
      checkSize(req.title, req.text);

      const started = Date.now();
      let r;
      try {
        r = await renderArticle({ title: req.title, text: req.text, voice, lang, parse: req.parse, isRaw: req.isRaw }, deps.engine, {
          concurrency: deps.chunkConcurrency ?? 2,
          signal: ctx.signal,
        });
      } catch (e) {
        if (e instanceof RenderInputError || e instanceof SpeechInputError) throw new ConnectError(e.message, Code.InvalidArgument);
        if (ctx.signal.aborted) throw new ConnectError("Synthesis cancelled", Code.Canceled);
        deps.log.error({ err: errorMessage(e) }, "ad-hoc synthesis failed");
        throw new ConnectError(`Speech synthesis failed: ${errorMessage(e)}`, Code.Internal);
      }
      const base = `adhoc/${randomUUID()}`;
      const full = `${base}/full.mp3`;
      const preview = `${base}/preview.mp3`;
      await deps.blobs.put(full, r.full, "audio/mpeg");
      await deps.blobs.put(preview, r.preview, "audio/mpeg");
      deps.log.info({ key: full, chunks: r.chunks, duration: r.fullDuration, ms: Date.now() - started }, "ad-hoc synthesis stored");
      return {
        full: { key: full, duration: r.fullDuration, size: BigInt(r.full.length) },
        preview: { key: preview, duration: r.previewDuration, size: BigInt(r.preview.length) },
        provider: deps.engine.name,
      };
    },
  };
}
