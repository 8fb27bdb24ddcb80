// ArticlesService: publisher calls scoped by the caller's project, and the
// audio worker's calls that move an article through its lifecycle.
import { Code, ConnectError, type HandlerContext, type ServiceImpl } from "@connectrpc/connect";
import { ArticleStatus as ProtoStatus, type ArticlesService } from "../../gen/articles/v1/articles_pb.js";
import type { JobBus } from "../../lib/bus/port.js";
import type { SafeFetchOptions } from "../../lib/net/safe-fetch.js";
import type { Logger } from "../../lib/log.js";
import { requireInternal, requirePublisher, type CallerResolver } from "../../lib/rpc/caller.js";
import { requestIdFields, requestIdOf } from "../../lib/rpc/request-id.js";
import { createAdmission, type Admission } from "./admission/admit.js";
import { recrawlArticle } from "./admission/recrawl.js";
import { unboundedSettings, type ProjectSettingsSource } from "./admission/settings.js";
import { statusFromProto, statusToProto, toProtoArticle } from "./convert.js";
import type { StatusEmitter } from "./events/publish.js";
import { newArticleId } from "./ids.js";
import {
  DuplicateExternalIdError,
  DuplicateIdError,
  type ArticlePatch,
  type ArticleStore,
  type StoredArticle,
  type StoredAudio,
} from "./store/port.js";
import * as v from "./validate.js";

export interface ArticlesServiceDeps {
  store: ArticleStore;
  bus: JobBus;
  resolveCaller: CallerResolver;
  /** `{audio_url}`: where the gateway serves audio keys. */
  audioBaseUrl: string;
  log: Logger;
  /** A publish slower than this is abandoned to the reconciler; default 5 s. */
  publishTimeoutMs?: number;
  /** Limits, credit, rules and defaults per project; default: unbounded, no rules. */
  settings?: ProjectSettingsSource;
  /** Status-change events; default: none. */
  emit?: StatusEmitter;
  /** Receives the admission built here, for the reconciler and the deferred sweep. */
  onAdmission?: (admission: Admission, publish: (a: StoredArticle, requestId?: string) => Promise<void>) => void;
  /** Recrawl fetch overrides (tests allow loopback). */
  recrawlFetch?: SafeFetchOptions;
}

/** Statuses in which a reservation was made but no synthesis has started; superseding them gives the characters back. */
const UNSTARTED = new Set(["waiting", "parsed"]);

const MAX_ERROR_CHARS = 2_000;
const WORKER_STATUSES = new Set(["processing", "retry", "fallback"] as const);

const notFound = (what: string) => new ConnectError(`Article ${what} not found`, Code.NotFound);
const duplicate = (externalId: string) => new ConnectError(`externalId '${externalId}' is already used`, Code.AlreadyExists);

export function createArticlesHandlers(deps: ArticlesServiceDeps): ServiceImpl<typeof ArticlesService> {
  const { store, bus, log, audioBaseUrl } = deps;
  const publishTimeoutMs = deps.publishTimeoutMs ?? 5_000;
  const toProto = (a: StoredArticle) => toProtoArticle(a, audioBaseUrl);
  const settings = deps.settings ?? unboundedSettings();
  const emit: StatusEmitter = deps.emit ?? (() => {});

  const publisher = async (ctx: HandlerContext, scope: "read" | "full") => requirePublisher(await deps.resolveCaller(ctx.requestHeader), scope);
  const internal = async (ctx: HandlerContext) => requireInternal(await deps.resolveCaller(ctx.requestHeader));

  /** The article is stored either way; a lost publish is the reconciler's job, not the publisher's problem. */
  async function publishJob(a: StoredArticle, requestId?: string): Promise<void> {
    const job = { articleId: a.id, projectId: a.projectId, revision: a.revision, ...(requestId ? { requestId } : {}) };
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        bus.publish(job),
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new Error(`publish timed out after ${publishTimeoutMs} ms`)), publishTimeoutMs);
        }),
      ]);
    } catch (err) {
      log.warn({ err, job, ...requestIdFields(requestId) }, "audio job publish failed; the reconciler will re-queue it");
    } finally {
      clearTimeout(timer);
    }
  }

  const admission = createAdmission({ store, settings, publish: publishJob, emit, log });
  deps.onAdmission?.(admission, publishJob);

  /** Admission failures (auth unreachable, …) leave the article pending; the reconciler admits it later. */
  async function admitNow(a: StoredArticle, requestId: string | undefined): Promise<void> {
    try {
      await admission.admit(a.id, a.revision, requestId);
    } catch (err) {
      log.warn({ err, articleId: a.id, revision: a.revision, ...requestIdFields(requestId) }, "admission postponed to the reconciler");
    }
  }

  /**
   * Gives back the characters reserved for a revision that will now never be
   * synthesized. The reservation is cleared first (once, conditionally), so a
   * concurrent FailAudioJob or second edit cannot refund it again.
   */
  async function refundUnused(a: StoredArticle): Promise<void> {
    if (!a.reservedChars || !UNSTARTED.has(a.status)) return;
    try {
      if (await store.takeReservation(a.id, a.revision, a.reservedChars)) await settings.refund(a.projectId, a.reservedChars);
    } catch (err) {
      log.error({ err, articleId: a.id, chars: a.reservedChars }, "refund failed");
    }
  }

  /** Worker-side transitions are keyed by id: look the article up once to announce its new status. */
  async function announce(id: string): Promise<StoredArticle | null> {
    const a = await store.getById(id).catch(() => null);
    if (a) emit(a);
    return a;
  }

  /** The project's default voice when the publisher sent none; the platform default otherwise. */
  async function projectDefaultVoice(projectId: string): Promise<{ voice: string; lang: string }> {
    try {
      const s = await settings.get(projectId);
      if (s.defaultVoice && s.defaultLang) return { voice: s.defaultVoice, lang: s.defaultLang };
    } catch (err) {
      log.warn({ err, projectId }, "project settings unavailable; using the default voice");
    }
    return v.defaultVoice();
  }

  const found = (a: StoredArticle | null, what: string) => {
    if (!a) throw notFound(what);
    return { article: toProto(a) };
  };

  const revisionOf = (r: bigint) => {
    if (r < 1n || r > BigInt(Number.MAX_SAFE_INTEGER)) throw v.invalid("revision must be 1 or more");
    return Number(r);
  };

  const trimError = (e: string) => (e.length > MAX_ERROR_CHARS ? `${e.slice(0, MAX_ERROR_CHARS)}…` : e);

  function readAudio(field: string, f: { key: string; duration: number } | undefined, required: boolean): StoredAudio | undefined {
    if (!f) {
      if (required) throw v.invalid(`${field} is required`);
      return undefined;
    }
    if (!f.key) throw v.invalid(`${field}.key is required`);
    if (!Number.isFinite(f.duration) || f.duration < 0) throw v.invalid(`${field}.duration must be a non-negative number of seconds`);
    return { key: f.key, duration: f.duration };
  }

  return {
    async createArticle(req, ctx) {
      const caller = await publisher(ctx, "full");
      const title = v.requiredText("title", req.title, v.LIMITS.title);
      const text = v.requiredText("text", req.text, v.LIMITS.text);
      const url = v.optionalUrl(req.url);
      const externalId = v.optionalExternalId("externalId", req.externalId);
      const { voice, lang } = v.voiceAndLang(req.voice, req.lang) ?? (await projectDefaultVoice(caller.projectId));
      const labels = v.labelList(req.labels);
      const prompt = req.prompt ? v.promptValue(req.prompt) : undefined;

      const requestId = requestIdOf(ctx);
      const draft = { projectId: caller.projectId, title, text, url, externalId, voice, lang, labels, prompt, isRaw: req.isRaw, parse: req.parse, admission: "pending" as const };
      // A clash of the random suffix is astronomically rare; a second draw settles it.
      for (let attempt = 0; ; attempt++) {
        try {
          const a = await store.insert({ ...draft, id: newArticleId(title) });
          log.info({ articleId: a.id, projectId: a.projectId, ...requestIdFields(requestId) }, "article created");
          emit(a);
          await admitNow(a, requestId);
          return { id: a.id };
        } catch (e) {
          if (e instanceof DuplicateExternalIdError) throw duplicate(e.externalId);
          if (e instanceof DuplicateIdError && attempt < 3) continue;
          throw e;
        }
      }
    },

    async getArticle(req, ctx) {
      const caller = await publisher(ctx, "read");
      const id = v.requiredId("id", req.id);
      return found(await store.get(caller.projectId, id), `'${id}'`);
    },

    async getArticleByExternalId(req, ctx) {
      const caller = await publisher(ctx, "read");
      const ext = v.requiredId("externalId", req.externalId);
      return found(await store.getByExternalId(caller.projectId, ext), `with externalId '${ext}'`);
    },

    async getArticleByUrl(req, ctx) {
      const caller = await publisher(ctx, "read");
      const url = v.requiredId("url", req.url);
      return found(await store.getByUrl(caller.projectId, url), `with url '${url}'`);
    },

    async listArticles(req, ctx) {
      const caller = await publisher(ctx, "read");
      const { limit, offset } = v.page(req.limit, req.offset);
      const { count, items } = await store.list(caller.projectId, limit, offset);
      return { count: BigInt(count), articles: items.map(toProto) };
    },

    async updateArticle(req, ctx) {
      const caller = await publisher(ctx, "full");
      const target = req.target;
      if (target.case === undefined || target.value === "") throw v.invalid("id or externalId of the article to update is required");

      const patch: ArticlePatch = {
        title: v.requiredText("title", req.title, v.LIMITS.title),
        text: v.requiredText("text", req.text, v.LIMITS.text),
        url: v.optionalUrl(req.url),
        externalId: v.optionalExternalId("externalId", req.newExternalId),
        ...v.voiceAndLang(req.voice, req.lang),
        parse: req.parse,
        isRaw: req.isRaw,
        labels: req.labels ? v.labelList(req.labels.values) : undefined,
        prompt: req.prompt ? (req.prompt.clear ? null : v.promptValue(req.prompt.value)) : undefined,
        admission: "pending",
      };

      const what = target.case === "id" ? `'${target.value}'` : `with externalId '${target.value}'`;
      const lookup = () => (target.case === "id" ? store.get(caller.projectId, target.value) : store.getByExternalId(caller.projectId, target.value));
      // Concurrent edits of one article: each retry re-reads the revision, so the last writer wins cleanly.
      for (let attempt = 0; attempt < 5; attempt++) {
        const current = await lookup();
        if (!current) throw notFound(what);
        if (current.status === "deleted") throw v.invalid(`Article ${what} is deleted and cannot be updated`);
        if (patch.externalId !== undefined && patch.externalId !== current.externalId) {
          const holder = await store.getByExternalId(caller.projectId, patch.externalId);
          if (holder && holder.id !== current.id) throw duplicate(patch.externalId);
        }
        // Before the update: the new revision drops the old reservation, which then could not be found to refund.
        await refundUnused(current);
        let outcome;
        try {
          outcome = await store.update(caller.projectId, current.id, current.revision, patch);
        } catch (e) {
          if (e instanceof DuplicateExternalIdError) throw duplicate(e.externalId);
          throw e;
        }
        if (outcome.ok) {
          const requestId = requestIdOf(ctx);
          log.info({ articleId: current.id, projectId: caller.projectId, revision: outcome.article.revision, ...requestIdFields(requestId) }, "article updated");
          emit(outcome.article);
          await admitNow(outcome.article, requestId);
          return { id: current.id };
        }
        if (outcome.reason === "deleted") throw v.invalid(`Article ${what} is deleted and cannot be updated`);
        if (outcome.reason === "not_found") throw notFound(what);
      }
      throw new ConnectError(`Article ${what} is being changed concurrently; try again`, Code.Aborted);
    },

    async deleteArticle(req, ctx) {
      const caller = await publisher(ctx, "full");
      const id = v.requiredId("id", req.id);
      const before = await store.get(caller.projectId, id);
      const a = await store.markDeleted(caller.projectId, id);
      if (!a) throw notFound(`'${id}'`);
      if (before && before.status !== "deleted") {
        emit(a);
        await refundUnused(before);
      }
      log.info({ articleId: id, projectId: caller.projectId, ...requestIdFields(requestIdOf(ctx)) }, "article deleted");
      return {};
    },

    async claimAudioJob(req, ctx) {
      await internal(ctx);
      const id = v.requiredId("articleId", req.articleId);
      const a = await store.claim(id, revisionOf(req.revision));
      if (!a) return { stale: true };
      emit(a);
      // The worker reads what admission decided to speak (parsed or recrawled text), already plain text.
      const article = toProto(a);
      if (a.spokenText !== undefined) {
        article.text = a.spokenText;
        article.parse = false;
      }
      return { stale: false, article };
    },

    async reportAudioStatus(req, ctx) {
      await internal(ctx);
      const id = v.requiredId("articleId", req.articleId);
      const status = statusFromProto(req.status);
      if (!status || !WORKER_STATUSES.has(status as never)) {
        throw v.invalid(`status must be one of ${[ProtoStatus.PROCESSING, ProtoStatus.RETRY, ProtoStatus.FALLBACK].map((s) => ProtoStatus[s]).join(", ")}`);
      }
      const applied = await store.reportStatus(id, revisionOf(req.revision), status as "processing" | "retry" | "fallback", req.error ? trimError(req.error) : undefined);
      if (applied) await announce(id);
      return { applied };
    },

    async completeAudioJob(req, ctx) {
      await internal(ctx);
      const id = v.requiredId("articleId", req.articleId);
      const revision = revisionOf(req.revision);
      const audio = readAudio("audio", req.audio, true)!;
      const preview = readAudio("audioPreview", req.audioPreview, false);
      const applied = await store.complete(id, revision, audio, preview);
      if (applied) await announce(id);
      log.info({ articleId: id, revision, applied, provider: req.provider || undefined, ...requestIdFields(requestIdOf(ctx)) }, applied ? "audio ready" : "late audio result discarded");
      return { applied };
    },

    async failAudioJob(req, ctx) {
      await internal(ctx);
      const id = v.requiredId("articleId", req.articleId);
      const revision = revisionOf(req.revision);
      const applied = await store.fail(id, revision, trimError(req.error || "Audio generation failed"));
      if (applied) {
        const a = await announce(id);
        // A synthesis that ended errored gives its characters back, once.
        if (a?.reservedChars && (await store.takeReservation(id, revision, a.reservedChars))) {
          await settings.refund(a.projectId, a.reservedChars).catch((err: unknown) => log.error({ err, articleId: id, chars: a.reservedChars }, "refund failed"));
        }
      }
      log.info({ articleId: id, revision, applied, ...requestIdFields(requestIdOf(ctx)) }, applied ? "audio failed" : "late failure discarded");
      return { applied };
    },

    async recrawlArticle(req, ctx) {
      await internal(ctx);
      const projectId = v.requiredId("projectId", req.projectId);
      const id = v.requiredId("articleId", req.articleId);
      const r = await recrawlArticle({ store, admission, settings, emit, log, fetchOptions: deps.recrawlFetch }, projectId, id);
      return { changed: r.changed, revision: BigInt(r.article.revision), status: statusToProto(r.article.status) };
    },

    async getArticleDecision(req, ctx) {
      await internal(ctx);
      const projectId = v.requiredId("projectId", req.projectId);
      const id = v.requiredId("articleId", req.articleId);
      const a = await store.get(projectId, id);
      if (!a) throw notFound(`'${id}'`);
      return {
        status: statusToProto(a.status),
        revision: BigInt(a.revision),
        rule: a.decision?.rule ?? "",
        detail: a.decision?.detail ?? "",
        decidedAt: a.decision?.at ?? "",
        reservedChars: BigInt(a.reservedChars ?? 0),
      };
    },

    async readmitDeferred(req, ctx) {
      await internal(ctx);
      return { admitted: await admission.readmitDeferred(req.projectId || undefined) };
    },
  };
}
