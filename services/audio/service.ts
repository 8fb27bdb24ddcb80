// audio.v1.AudioService: voices, text preview and ad-hoc synthesis. A
// publisher's ad-hoc synthesis spends what an article spends, so it is
// charged like one (daily limit, credit) and its files expire (adhoc.ts).
import { randomUUID } from "node:crypto";
import { Code, ConnectError, type HandlerContext, type ServiceImpl } from "@connectrpc/connect";
import { AudioService } from "../../gen/audio/v1/audio_pb.js";
import type { BlobStore } from "../../lib/blob/port.js";
import type { Logger } from "../../lib/log.js";
import { cleanRule, pronunciationProblem, rulesForLang } from "../../lib/pronunciations.js";
import { ruleFromProto } from "../../lib/rpc/pronunciations.js";
import { requirePublisher, type Caller, type CallerResolver } from "../../lib/rpc/caller.js";
import { checkVoiceLang, DEFAULT_LANG, DEFAULT_VOICE, LANGS, voiceInfo, type Lang } from "../../lib/voices.js";
import { adhocBase, adhocExpiry, DEFAULT_ADHOC_TTL_MS } from "./adhoc.js";
import { voiceCatalog, type CatalogVoice } from "./engine/catalog.js";
import { SpeechInputError, type SpeechEngine } from "./engine/index.js";
import { DEFAULT_LOUDNESS, type LoudnessTarget } from "./loudness/index.js";
import { RenderInputError, renderArticle } from "./pipeline.js";
import { inlineTextWork, TextRejectedError, type TextWork } from "./text/work.js";
import { errorMessage } from "./worker.js";

export type QuotaOutcome = { outcome: "reserved"; debited: boolean } | { outcome: "limit_reached" | "no_money" };

/** The project's daily limit and credit, kept by the auth service (ReserveAudification/RefundAudification). */
export interface SynthesisQuota {
  reserve(projectId: string, chars: number): Promise<QuotaOutcome>;
  refund(projectId: string, chars: number): Promise<void>;
}

export interface AudioServiceDeps {
  resolveCaller: CallerResolver;
  blobs: BlobStore;
  engine: SpeechEngine;
  log: Logger;
  chunkConcurrency?: number;
  /** Where text preparation runs (a thread pool with a deadline, text/work.ts); default: this thread. */
  text?: TextWork;
  /** Longest accepted title + text, in characters. */
  maxTextChars?: number;
  /** Charges publishers' ad-hoc synthesis. Absent: publishers may not call Synthesize at all. */
  quota?: SynthesisQuota;
  /**
   * The loudness target of a synthesis: the deployment's, with the calling project's own
   * `loudness` setting over it (internal callers: the deployment's). Default: -19 LUFS / -1 dBTP.
   */
  loudnessFor?: (projectId: string | undefined) => Promise<LoudnessTarget>;
  /** Lifetime of ad-hoc files and how often the sweep runs (for the `expires` answer). */
  adhocTtlMs?: number;
  adhocSweepEveryMs?: number;
  /** Every voice with the engines this process has (engine/catalog.ts). Default: nothing but eSpeak loaded. */
  voices?: () => readonly CatalogVoice[];
  /** Renders a voice's sample with the engine that speaks it now. Absent: VoiceSample answers Unimplemented. */
  sample?: (voice: string, lang: Lang, signal: AbortSignal) => Promise<{ mp3: Buffer; engine: string }>;
}

/** What VoiceSample reads: one short sentence per locale, with a number and a name, so the sample shows how the engine handles both. */
export const SAMPLE_TEXT: Readonly<Record<Lang, string>> = Object.freeze({
  "en-US": "Good morning. This is how I read your articles: clearly, at an easy pace, and even the 42 figures in your budget story.",
  "en-GB": "Good morning. This is how I read your articles: clearly, at an easy pace, and even the 42 figures in your council story.",
  "de-DE": "Guten Morgen. So lese ich Ihre Artikel vor: deutlich, in ruhigem Tempo, und auch die 42 Zahlen in Ihrem Bericht über den Haushalt.",
});

function checkLang(lang: string): string {
  const l = lang || DEFAULT_LANG;
  if (!(LANGS as readonly string[]).includes(l)) throw new ConnectError(`Unsupported lang '${lang}'; one of: ${LANGS.join(", ")}`, Code.InvalidArgument);
  return l;
}

/** Whose turn a caller's text work takes in the text pool. */
const projectOf = (who: Caller) => (who.kind === "internal" ? "" : who.projectId);

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
      const voices = deps.voices ? deps.voices() : voiceCatalog({});
      return {
        voices: voices.map((v) => ({
          name: v.name,
          langs: [...v.langs],
          provider: voiceInfo(v.name)?.provider ?? "local",
          engine: v.engine,
          neural: v.neural,
          available: v.available,
          speaks: Object.fromEntries(Object.entries(v.speaks).filter(([, engine]) => engine !== undefined)) as Record<string, string>,
        })),
      };
    },

    async voiceSample(req, ctx) {
      await caller(ctx);
      const lang = checkLang(req.lang) as Lang;
      const bad = checkVoiceLang(req.voice, lang);
      if (bad) throw new ConnectError(bad, Code.InvalidArgument);
      if (!deps.sample) throw new ConnectError("Voice samples are not rendered here", Code.Unimplemented);
      try {
        return await deps.sample(req.voice, lang, ctx.signal);
      } catch (e) {
        // Past the caller's deadline the render goes on and is kept (voice-status.ts): a retry finds it.
        if (ctx.signal.aborted) throw ctx.signal.reason instanceof ConnectError ? ctx.signal.reason : new ConnectError("Sample cancelled", Code.Canceled);
        deps.log.warn({ err: errorMessage(e), voice: req.voice, lang }, "voice sample failed");
        throw new ConnectError(`The voice sample could not be rendered: ${errorMessage(e)}`, Code.Unavailable);
      }
    },

    async prepareText(req, ctx) {
      const who = await caller(ctx);
      const lang = checkLang(req.lang);
      checkSize(req.title, req.text);
      try {
        const prepared = await (deps.text ?? inlineTextWork).prepare(projectOf(who), { title: req.title, text: req.text, lang, parse: req.parse, isRaw: req.isRaw });
        return { paragraphs: prepared.map((p) => p.spoken.join(" ")) };
      } catch (e) {
        if (e instanceof TextRejectedError) throw new ConnectError(e.reason, Code.InvalidArgument);
        throw e;
      }
    },

    async synthesize(req, ctx) {
      const who = await caller(ctx);
      const publisher = who.kind === "internal" ? undefined : requirePublisher(who, "full");
      if (publisher && !deps.quota) throw new ConnectError("Synthesize is reserved for internal services here", Code.PermissionDenied);
      const voice = req.voice || DEFAULT_VOICE;
      const lang = checkLang(req.lang);
      const bad = checkVoiceLang(voice, lang);
      if (bad) throw new ConnectError(bad, Code.InvalidArgument);
      checkSize(req.title, req.text);
      // Checked as SetPronunciations checks a project's list, so a rule this call renders is one the
      // project could store, and the 400 names the same field.
      const given = req.pronunciations.map(ruleFromProto);
      const problem = pronunciationProblem(given);
      if (problem) throw new ConnectError(problem, Code.InvalidArgument);
      // What admission snapshots on a revision: the rules of its language.
      const pronunciations = rulesForLang(given.map(cleanRule), lang);

      // Charged before any work, as admission charges an article: the characters sent, markup included.
      const chars = req.title.length + req.text.length;
      let debited = false;
      if (publisher && deps.quota) {
        const q = await deps.quota.reserve(publisher.projectId, chars);
        if (q.outcome === "limit_reached") throw new ConnectError("The project's daily limit of audified articles is reached; ad-hoc synthesis counts as one", Code.ResourceExhausted);
        if (q.outcome !== "reserved") throw new ConnectError(`Not enough credit: this synthesis needs ${chars} characters`, Code.ResourceExhausted);
        debited = q.debited;
      }
      const refund = async () => {
        if (publisher && debited && deps.quota) await deps.quota.refund(publisher.projectId, chars).catch((err: unknown) => deps.log.error({ err: errorMessage(err), projectId: publisher.projectId, chars }, "ad-hoc synthesis refund failed"));
      };

      const started = Date.now();
      let r;
      try {
        const loudness = deps.loudnessFor ? await deps.loudnessFor(publisher?.projectId) : DEFAULT_LOUDNESS;
        r = await renderArticle({ title: req.title, text: req.text, voice, lang, parse: req.parse, isRaw: req.isRaw, pronunciations }, deps.engine, {
          concurrency: deps.chunkConcurrency ?? 2,
          signal: ctx.signal,
          loudness,
          text: deps.text && { work: deps.text, project: projectOf(who) },
        });
      } catch (e) {
        await refund();
        if (e instanceof RenderInputError || e instanceof SpeechInputError) throw new ConnectError(e.message, Code.InvalidArgument);
        if (ctx.signal.aborted) throw new ConnectError("Synthesis cancelled", Code.Canceled);
        deps.log.error({ err: errorMessage(e) }, "ad-hoc synthesis failed");
        throw new ConnectError(`Speech synthesis failed: ${errorMessage(e)}`, Code.Internal);
      }
      const base = adhocBase(Date.now(), randomUUID());
      const full = `${base}/full.mp3`;
      const preview = `${base}/preview.mp3`;
      try {
        await deps.blobs.put(full, r.full, "audio/mpeg");
        await deps.blobs.put(preview, r.preview, "audio/mpeg");
      } catch (e) {
        await refund();
        await deps.blobs.deletePrefix(`${base}/`).catch(() => undefined);
        throw e;
      }
      const expires = adhocExpiry(Date.now(), deps.adhocTtlMs ?? DEFAULT_ADHOC_TTL_MS, deps.adhocSweepEveryMs ?? 10 * 60_000);
      deps.log.info({ key: full, chunks: r.chunks, duration: r.fullDuration, ms: Date.now() - started, projectId: publisher?.projectId, chars }, "ad-hoc synthesis stored");
      return {
        full: { key: full, duration: r.fullDuration, size: BigInt(r.full.length) },
        preview: { key: preview, duration: r.previewDuration, size: BigInt(r.preview.length) },
        provider: deps.engine.name,
        expires: BigInt(Math.floor(expires / 1000)),
      };
    },
  };
}
