// Operator calls (internal credential only): recrawl, decisions, deferred admissions, recount.
import type { ServiceImpl } from "@connectrpc/connect";
import type { ArticlesService } from "../../../gen/articles/v1/articles_pb.js";
import { recrawlArticle } from "../admission/recrawl.js";
import { statusToProto } from "../convert.js";
import * as v from "../validate.js";
import { notFound, type HandlerShared } from "./context.js";

type OperatorCalls = Pick<ServiceImpl<typeof ArticlesService>, "recrawlArticle" | "getArticleDecision" | "readmitDeferred" | "recountArticles">;

export function operatorHandlers(s: HandlerShared): OperatorCalls {
  const { deps, store, log, emit, settings, internal, admission } = s;
  return {
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

    async recountArticles(_req, ctx) {
      await internal(ctx);
      const started = Date.now();
      await store.recount?.();
      log.info({ tookMs: Date.now() - started }, "article counts recomputed");
      return { tookMs: BigInt(Date.now() - started) };
    },
  };
}
