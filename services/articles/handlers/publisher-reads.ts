// Publisher reads: every lookup is scoped by the caller's project.
import type { ServiceImpl } from "@connectrpc/connect";
import type { ArticlesService } from "../../../gen/articles/v1/articles_pb.js";
import { statusFromProto } from "../convert.js";
import { ARTICLE_STATUSES, type ArticleStatus } from "../store/port.js";
import * as v from "../validate.js";
import type { HandlerShared } from "./context.js";

type Reads = Pick<ServiceImpl<typeof ArticlesService>, "getArticle" | "getArticleByExternalId" | "getArticleByUrl" | "listArticles">;

export function publisherReadHandlers(s: HandlerShared): Reads {
  const { store, publisher, found, toProto } = s;
  return {
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
      let status: ArticleStatus | undefined;
      if (req.status !== undefined) {
        status = statusFromProto(req.status);
        if (status === undefined) throw v.invalid(`status must be one of: ${ARTICLE_STATUSES.join(", ")}`);
      }
      const label = v.labelFilter(req.label);
      const words = v.searchWords(req.query);
      const { count, items, countCapped } = await store.list(caller.projectId, limit, offset, { status, label, words });
      return { count: BigInt(count), articles: items.map(toProto), countCapped: countCapped === true };
    },
  };
}
