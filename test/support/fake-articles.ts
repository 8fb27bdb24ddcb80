// The articles service as the audio worker sees it: the four audio-job calls,
// internal token only, over an in-test map. Writes apply only to the current
// revision of an article that is not deleted, as in the real service.
import { Code, ConnectError, type HandlerContext } from "@connectrpc/connect";
import { ArticleStatus, ArticlesService } from "../../gen/articles/v1/articles_pb.js";
import type { LoudnessSettings } from "../../lib/loudness.js";
import type { PronunciationRule } from "../../lib/pronunciations.js";
import { ruleToProto } from "../../lib/rpc/pronunciations.js";
import { logger } from "../../lib/log.js";
import { startRpcServer, type RpcServer } from "../../lib/rpc/server.js";

export interface FakeArticle {
  id: string;
  revision: number;
  title: string;
  text: string;
  parse?: boolean;
  voice?: string;
  lang?: string;
  status: ArticleStatus;
  /** Every status the worker reported, in order. */
  statuses: ArticleStatus[];
  /** How often the worker said the job is still in hand (keepAlive reports; no status). */
  keptDue?: number;
  /** As the articles service keeps them: message + ISO date. */
  errors: Array<{ error: string; date: string }>;
  /** The final error of a failed job. */
  error?: string;
  audio?: { key: string; duration: number };
  preview?: { key: string; duration: number };
  provider?: string;
  /** What the worker said it stored beside the MP3s (timed text). */
  transcript?: { chapters: boolean };
  /** Pronunciation rules snapshotted on the revision, handed out with the claim. */
  pronunciations?: PronunciationRule[];
  /** The project's loudness target snapshotted on the revision, handed out with the claim. */
  loudness?: LoudnessSettings;
}

export function startFakeArticles(articles: Map<string, FakeArticle>, internalToken: string): Promise<RpcServer> {
  const internalOnly = (ctx: HandlerContext) => {
    if (ctx.requestHeader.get("authorization") !== `Bearer ${internalToken}`) throw new ConnectError("internal only", Code.PermissionDenied);
  };
  const current = (id: string, rev: bigint) => {
    const a = articles.get(id);
    return a && BigInt(a.revision) === rev && a.status !== ArticleStatus.DELETED ? a : undefined;
  };
  const pushError = (a: FakeArticle, error: string) => a.errors.push({ error, date: new Date().toISOString() });
  /** The three result reports: applied only to the current revision, as the real service does. */
  const report = (req: { articleId: string; revision: bigint }, ctx: HandlerContext, change: (a: FakeArticle) => void) => {
    internalOnly(ctx);
    const a = current(req.articleId, req.revision);
    if (!a) return { applied: false };
    change(a);
    return { applied: true };
  };
  return startRpcServer({
    name: "articles-fake",
    services: [ArticlesService.typeName],
    log: logger("articles-fake"),
    routes(router) {
      router.service(ArticlesService, {
        claimAudioJob(req, ctx) {
          internalOnly(ctx);
          const a = current(req.articleId, req.revision);
          if (!a) return { stale: true };
          a.status = ArticleStatus.PROCESSING;
          const article = { id: a.id, title: a.title, text: a.text, parse: a.parse ?? false, voice: a.voice ?? "alloy", lang: a.lang ?? "en-US", revision: BigInt(a.revision) };
          return { stale: false, article, pronunciations: (a.pronunciations ?? []).map(ruleToProto), loudness: a.loudness };
        },
        reportAudioStatus: (req, ctx) =>
          report(req, ctx, (a) => {
            if (req.keepAlive) {
              a.keptDue = (a.keptDue ?? 0) + 1;
              return;
            }
            a.status = req.status;
            a.statuses.push(req.status);
            if (req.error) pushError(a, req.error);
          }),
        completeAudioJob: (req, ctx) =>
          report(req, ctx, (a) => {
            a.status = ArticleStatus.READY;
            a.audio = { key: req.audio!.key, duration: req.audio!.duration };
            a.preview = req.audioPreview ? { key: req.audioPreview.key, duration: req.audioPreview.duration } : undefined;
            a.provider = req.provider;
            a.transcript = req.transcript ? { chapters: req.transcript.chapters } : undefined;
          }),
        failAudioJob: (req, ctx) =>
          report(req, ctx, (a) => {
            a.status = ArticleStatus.ERRORED;
            a.error = req.error;
            pushError(a, req.error);
          }),
      });
    },
  });
}
