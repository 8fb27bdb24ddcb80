// ArticlesService: publisher calls scoped by the caller's project, and the
// audio worker's calls that move an article through its lifecycle.
import { Code, ConnectError, type HandlerContext, type ServiceImpl } from "@connectrpc/connect";
import { ArticleStatus as ProtoStatus, type ArticlesService } from "../../gen/articles/v1/articles_pb.js";
import type { JobBus } from "../../lib/bus/port.js";
import type { Logger } from "../../lib/log.js";
import { requireInternal, requirePublisher, type CallerResolver } from "../../lib/rpc/caller.js";
import { statusFromProto, toProtoArticle } from "./convert.js";
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
}

const MAX_ERROR_CHARS = 2_000;
const WORKER_STATUSES = new Set(["processing", "retry", "fallback"] as const);

const notFound = (what: string) => new ConnectError(`Article ${what} not found`, Code.NotFound);
const duplicate = (externalId: string) => new ConnectError(`externalId '${externalId}' is already used`, Code.AlreadyExists);

export function createArticlesHandlers(deps: ArticlesServiceDeps): ServiceImpl<typeof ArticlesService> {
  const { store, bus, log, audioBaseUrl } = deps;
  const publishTimeoutMs = deps.publishTimeoutMs ?? 5_000;
  const toProto = (a: StoredArticle) => toProtoArticle(a, audioBaseUrl);

  const publisher = async (ctx: HandlerContext, scope: "read" | "full") => requirePublisher(await deps.resolveCaller(ctx.requestHeader), scope);
  const internal = async (ctx: HandlerContext) => requireInternal(await deps.resolveCaller(ctx.requestHeader));

  /** The article is stored either way; a lost publish is the reconciler's job, not the publisher's problem. */
  async function publishJob(a: StoredArticle): Promise<void> {
    const job = { articleId: a.id, projectId: a.projectId, revision: a.revision };
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        bus.publish(job),
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new Error(`publish timed out after ${publishTimeoutMs} ms`)), publishTimeoutMs);
        }),
      ]);
    } catch (err) {
      log.warn({ err, job }, "audio job publish failed; the reconciler will re-queue it");
    } finally {
      clearTimeout(timer);
    }
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
      const { voice, lang } = v.voiceAndLang(req.voice, req.lang) ?? v.defaultVoice();
      const labels = v.labelList(req.labels);
      const prompt = req.prompt ? v.promptValue(req.prompt) : undefined;

      const draft = { projectId: caller.projectId, title, text, url, externalId, voice, lang, labels, prompt, isRaw: req.isRaw, parse: req.parse };
      // A clash of the random suffix is astronomically rare; a second draw settles it.
      for (let attempt = 0; ; attempt++) {
        try {
          const a = await store.insert({ ...draft, id: newArticleId(title) });
          log.info({ articleId: a.id, projectId: a.projectId }, "article created");
          await publishJob(a);
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
      };

      const what = target.case === "id" ? `'${target.value}'` : `with externalId '${target.value}'`;
      const lookup = () => (target.case === "id" ? store.get(caller.projectId, target.value) : store.getByExternalId(caller.projectId, target.value));
      // Concurrent edits of one article: each retry re-reads the revision, so the last writer wins cleanly.
      for (let attempt = 0; attempt < 5; attempt++) {
        const current = await lookup();
        if (!current) throw notFound(what);
        if (current.status === "deleted") throw v.invalid(`Article ${what} is deleted and cannot be updated`);
        let outcome;
        try {
          outcome = await store.update(caller.projectId, current.id, current.revision, patch);
        } catch (e) {
          if (e instanceof DuplicateExternalIdError) throw duplicate(e.externalId);
          throw e;
        }
        if (outcome.ok) {
          log.info({ articleId: current.id, projectId: caller.projectId, revision: outcome.article.revision }, "article updated");
          await publishJob(outcome.article);
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
      const a = await store.markDeleted(caller.projectId, id);
      if (!a) throw notFound(`'${id}'`);
      log.info({ articleId: id, projectId: caller.projectId }, "article deleted");
      return {};
    },

    async claimAudioJob(req, ctx) {
      await internal(ctx);
      const id = v.requiredId("articleId", req.articleId);
      const a = await store.claim(id, revisionOf(req.revision));
      return a ? { stale: false, article: toProto(a) } : { stale: true };
    },

    async reportAudioStatus(req, ctx) {
      await internal(ctx);
      const id = v.requiredId("articleId", req.articleId);
      const status = statusFromProto(req.status);
      if (!status || !WORKER_STATUSES.has(status as never)) {
        throw v.invalid(`status must be one of ${[ProtoStatus.PROCESSING, ProtoStatus.RETRY, ProtoStatus.FALLBACK].map((s) => ProtoStatus[s]).join(", ")}`);
      }
      const applied = await store.reportStatus(id, revisionOf(req.revision), status as "processing" | "retry" | "fallback", req.error ? trimError(req.error) : undefined);
      return { applied };
    },

    async completeAudioJob(req, ctx) {
      await internal(ctx);
      const id = v.requiredId("articleId", req.articleId);
      const revision = revisionOf(req.revision);
      const audio = readAudio("audio", req.audio, true)!;
      const preview = readAudio("audioPreview", req.audioPreview, false);
      const applied = await store.complete(id, revision, audio, preview);
      log.info({ articleId: id, revision, applied, provider: req.provider || undefined }, applied ? "audio ready" : "late audio result discarded");
      return { applied };
    },

    async failAudioJob(req, ctx) {
      await internal(ctx);
      const id = v.requiredId("articleId", req.articleId);
      const revision = revisionOf(req.revision);
      const applied = await store.fail(id, revision, trimError(req.error || "Audio generation failed"));
      log.info({ articleId: id, revision, applied }, applied ? "audio failed" : "late failure discarded");
      return { applied };
    },
  };
}
