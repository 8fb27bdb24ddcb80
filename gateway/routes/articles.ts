// The nine spec endpoints (#1 is the redirect in docs.ts). Each one checks
// its input against the shared schemas, forwards the publisher's bearer
// token to ArticlesService and shapes the answer as the spec says.
import { create } from "@bufbuild/protobuf";
import type { CallOptions, Client } from "@connectrpc/connect";
import type { Router } from "@koa/router";
import type { Context } from "koa";
import {
  PromptChangeSchema,
  LabelListSchema,
  type ArticlesService,
  type Article,
  type UpdateArticleRequest,
} from "../../gen/articles/v1/articles_pb.js";
import { bearerToken } from "../../lib/rpc/caller.js";
import { readJsonBody } from "../body.js";
import { HttpError } from "../errors.js";
import { articleJson, listItemJson } from "../present.js";
import { validate, type CreateBody, type UpdateBody } from "../schemas.js";

export interface ArticleRoutesOptions {
  client: Client<typeof ArticlesService>;
  maxBodyBytes: number;
}

export const EXTERNAL_URL_PREFIX = "/api/articles_external_url/";

/** Rejects a missing or malformed bearer header before any upstream call, with the services' own wording. */
function callOptions(ctx: Context): CallOptions {
  const authorization = ctx.get("Authorization");
  bearerToken(new Headers(authorization ? { authorization } : {}));
  return { headers: { authorization, "x-request-id": ctx.state.requestId } };
}

function found(article: Article | undefined): Record<string, unknown> {
  if (!article) throw new HttpError(404, "Article not found");
  return { result: "ok", article: articleJson(article) };
}

/**
 * The original URL of #9, decoded exactly once. Clients (or proxies) that
 * left the slashes unencoded still work; a "//" collapsed by a proxy is
 * restored; and when the URL clearly arrived unencoded, its own query
 * string is the request's.
 */
export function externalUrlOf(rawPath: string, querystring: string): string {
  const raw = rawPath.slice(EXTERNAL_URL_PREFIX.length);
  let url: string;
  try {
    url = decodeURIComponent(raw);
  } catch {
    throw new HttpError(400, "externalUrl: is not correctly URL-encoded");
  }
  url = url.replace(/^(https?):\/(?!\/)/i, "$1://");
  if (querystring && raw.includes("/")) url = `${url}?${querystring}`;
  return url;
}

function updateRequest(target: UpdateArticleRequest["target"], body: UpdateBody) {
  return {
    target,
    title: body.title,
    text: body.text,
    url: body.url,
    newExternalId: body.externalId,
    voice: body.voice,
    lang: body.lang,
    parse: body.parse,
    isRaw: body.isRaw,
    prompt:
      body.prompt === null
        ? create(PromptChangeSchema, { clear: true })
        : body.prompt !== undefined
          ? create(PromptChangeSchema, { value: body.prompt })
          : undefined,
    labels: body.labels ? create(LabelListSchema, { values: body.labels }) : undefined,
  };
}

export function articleRoutes(router: Router, opts: ArticleRoutesOptions): void {
  const { client, maxBodyBytes } = opts;

  router.get("/api/articles", async (ctx) => {
    const call = callOptions(ctx);
    const query: Record<string, unknown> = { ...ctx.query };
    validate.listQuery(query);
    const res = await client.listArticles({ limit: query.limit as number, offset: query.offset as number }, call);
    ctx.body = { result: "ok", count: Number(res.count), articles: res.articles.map(listItemJson) };
  });

  router.post("/api/articles", async (ctx) => {
    const call = callOptions(ctx);
    const body = await readJsonBody(ctx, maxBodyBytes);
    validate.createBody(body);
    const b = body as CreateBody;
    const res = await client.createArticle(
      {
        title: b.title,
        text: b.text,
        url: b.url,
        externalId: b.externalId,
        voice: b.voice,
        lang: b.lang,
        parse: b.parse ?? false,
        isRaw: b.isRaw ?? false,
        prompt: b.prompt,
        labels: b.labels ?? [],
      },
      call,
    );
    ctx.body = { result: "ok", id: res.id };
  });

  router.get("/api/articles/:articleId", async (ctx) => {
    const call = callOptions(ctx);
    validate.articleId(ctx.params.articleId);
    const res = await client.getArticle({ id: ctx.params.articleId }, call);
    ctx.body = found(res.article);
  });

  router.put("/api/articles/:articleId", async (ctx) => {
    const call = callOptions(ctx);
    validate.articleId(ctx.params.articleId);
    const body = await readJsonBody(ctx, maxBodyBytes);
    validate.updateBody(body);
    const res = await client.updateArticle(updateRequest({ case: "id", value: ctx.params.articleId }, body as UpdateBody), call);
    ctx.body = { result: "ok", id: res.id };
  });

  router.delete("/api/articles/:articleId", async (ctx) => {
    const call = callOptions(ctx);
    validate.articleId(ctx.params.articleId);
    await client.deleteArticle({ id: ctx.params.articleId }, call);
    ctx.body = { result: "ok" };
  });

  router.get("/api/articles_external_id/:externalId", async (ctx) => {
    const call = callOptions(ctx);
    validate.externalId(ctx.params.externalId);
    const res = await client.getArticleByExternalId({ externalId: ctx.params.externalId }, call);
    ctx.body = found(res.article);
  });

  router.put("/api/articles_external_id/:externalId", async (ctx) => {
    const call = callOptions(ctx);
    validate.externalId(ctx.params.externalId);
    const body = await readJsonBody(ctx, maxBodyBytes);
    validate.updateBody(body);
    const res = await client.updateArticle(updateRequest({ case: "externalId", value: ctx.params.externalId }, body as UpdateBody), call);
    ctx.body = { result: "ok", id: res.id };
  });

  router.get(`${EXTERNAL_URL_PREFIX}*externalUrl`, async (ctx) => {
    const call = callOptions(ctx);
    const url = externalUrlOf(ctx.path, ctx.querystring);
    validate.externalUrl(url);
    const res = await client.getArticleByUrl({ url }, call);
    ctx.body = found(res.article);
  });
}
