// The nine spec endpoints (#1 is the redirect in docs.ts). Each one checks
// its input against the shared schemas, forwards the publisher's bearer
// token to ArticlesService and shapes the answer as the spec says.
import { create } from "@bufbuild/protobuf";
import type { Client } from "@connectrpc/connect";
import type { Router } from "@koa/router";
import type { Context } from "koa";
import {
  ArticleStatus,
  PromptChangeSchema,
  PublishedChangeSchema,
  LabelListSchema,
  type ArticlesService,
  type Article,
  type UpdateArticleRequest,
} from "../../gen/articles/v1/articles_pb.js";
import type { BlobStore } from "../../lib/blob/port.js";
import type { CallerResolver } from "../../lib/rpc/caller.js";
import { readJsonBody } from "../body.js";
import { createCoalescer } from "../coalesce.js";
import { createBatcher } from "../create-batch.js";
import { HttpError } from "../errors.js";
import { createImmutableFiles } from "../immutable-files.js";
import { createRequestOf } from "../import-stream.js";
import { articleJson, listItemJson, statusFromName } from "../present.js";
import { baseOf } from "../public-links.js";
import { validate, type CreateBody, type UpdateBody } from "../schemas.js";
import type { WriterCheck } from "../writer-check.js";
import { createKeptAnswers, type KeptAnswers } from "../kept-answers.js";
import { laneKeyOf, type ImportLanes } from "../import-lanes.js";
import { publisherCall } from "../publisher-call.js";

export interface ArticleRoutesOptions {
  client: Client<typeof ArticlesService>;
  maxBodyBytes: number;
  /** Bound on distinct identical-read groups in flight (see coalesce.ts). */
  maxSharedReads?: number;
  /** Refuses a bad or read-only token before the body is read (reads never pay for it). */
  checkWriter?: WriterCheck;
  /** PUBLIC_BASE_URL, for audio URLs the articles service left root-relative (public-links.ts). */
  publicBaseUrl?: string;
  /** Where the audio files and the timed segments beside them are (GET …/segments); absent: that route answers 404. */
  blobs?: BlobStore;
  /** Bytes of segments files kept in memory; default in immutable-files.ts. */
  segmentsCacheBytes?: number;
  /**
   * Grows with every write the read answers are made from (articles, tokens, projects); given
   * only where this process makes all of them (the embedded default). Read answers are then kept
   * and reused until it grows (kept-answers.ts).
   */
  storeChanges?: () => number;
  /** As storeChanges, not grown by the insert of a new article (kept-answers.ts, one-row answers). */
  storeRewrites?: () => number;
  /** Fair turns of the creates' store work, shared with the imports (import-lanes.ts); absent: creates go at once. */
  lanes?: ImportLanes;
  /** Whose project a token is, for the lanes; absent: the token itself stands for it. */
  callers?: CallerResolver;
}

export const EXTERNAL_URL_PREFIX = "/api/articles_external_url/";

const JSON_TYPE = "application/json; charset=utf-8";

interface Reads {
  shared: ReturnType<typeof createCoalescer<string>>;
  kept?: KeptAnswers;
}

/**
 * Reads answer with JSON text shared by identical reads in flight (same
 * credential, method and read; see coalesce.ts). A read that joins another
 * one is answered under the first one's upstream request id. The base of the
 * audio links is part of the key: it may follow the request. `read` names
 * what the answer is made from (the path, or the validated query's values),
 * never the raw query string: a route that ignores it would otherwise make a
 * new key (and a kept copy) of the very same answer for any query a client
 * sends, and two spellings of one query would not share.
 */
async function sharedRead(reads: Reads, ctx: Context, authorization: string, base: string, read: string, produce: () => Promise<unknown>, oneRow = false): Promise<void> {
  const key = `${authorization} ${base} ${ctx.method} ${read}`;
  const kept = reads.kept;
  // Closures passed inline: one assigned to a name gets tsx's __name() call on every request.
  const json = kept?.get(key) ?? (await reads.shared.run(key, kept ? () => kept.keep(key, () => jsonOf(produce), oneRow) : () => jsonOf(produce)));
  // What `ctx.type = "json"` sets, without Koa's MIME lookup on every read.
  ctx.set("Content-Type", JSON_TYPE);
  ctx.body = json;
}

async function jsonOf(produce: () => Promise<unknown>): Promise<string> {
  return JSON.stringify(await produce());
}

const noSegments = () =>
  new HttpError(404, "This article has no segments: no revision of it is ready, or its ready revision was rendered before timed segments were recorded");

function found(article: Article | undefined, base: string): Record<string, unknown> {
  if (!article) throw new HttpError(404, "Article not found");
  return { result: "ok", article: articleJson(article, base) };
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
    published:
      body.published === null
        ? create(PublishedChangeSchema, { clear: true })
        : body.published !== undefined
          ? create(PublishedChangeSchema, { value: body.published })
          : undefined,
  };
}

export function articleRoutes(router: Router, opts: ArticleRoutesOptions): void {
  const { client, maxBodyBytes } = opts;
  const readBody = async (ctx: Context, authorization: string) => {
    await opts.checkWriter?.(authorization);
    return readJsonBody(ctx, maxBodyBytes);
  };
  const reads: Reads = { shared: createCoalescer<string>(opts.maxSharedReads), kept: opts.storeChanges && createKeptAnswers(opts.storeChanges, { rewrites: opts.storeRewrites }) };
  const base = (ctx: Context) => baseOf(ctx, opts.publicBaseUrl);
  const lanes = opts.lanes;
  const createArticle = createBatcher(client, lanes && (async (authorization, call) => lanes.createLane(await laneKeyOf(authorization, opts.callers))(call)));

  router.get("/api/articles", async (ctx) => {
    const call = publisherCall(ctx);
    const query: Record<string, unknown> = { ...ctx.query };
    validate.listQuery(query);
    const b = base(ctx);
    const read = `${ctx.path}?${new URLSearchParams({ limit: String(query.limit), offset: String(query.offset), status: (query.status as string) ?? "", label: (query.label as string) ?? "", q: (query.q as string) ?? "" })}`;
    await sharedRead(reads, ctx, call.headers.authorization, b, read, async () => {
      const filter = { status: statusFromName(query.status as string | undefined), label: query.label as string | undefined, query: query.q as string | undefined };
      const res = await client.listArticles({ limit: query.limit as number, offset: query.offset as number, ...filter }, call);
      return { result: "ok", count: Number(res.count), ...(res.countCapped ? { countCapped: true } : {}), articles: res.articles.map((a) => listItemJson(a, b)) };
    });
  });

  router.post("/api/articles", async (ctx) => {
    const call = publisherCall(ctx);
    const body = await readBody(ctx, call.headers.authorization);
    validate.createBody(body);
    const b = body as CreateBody;
    const { id, warning } = await createArticle(call.headers.authorization, ctx.state.requestId, createRequestOf(b));
    ctx.body = warning ? { result: "ok", id, warning } : { result: "ok", id };
  });

  router.get("/api/articles/:articleId", async (ctx) => {
    const call = publisherCall(ctx);
    const id = ctx.params.articleId;
    validate.articleId(id);
    const b = base(ctx);
    // Made from the one article by its id (and the token): a create of another article leaves it current.
    await sharedRead(reads, ctx, call.headers.authorization, b, ctx.path, async () => found((await client.getArticle({ id }, call)).article, b), true);
  });

  // The ready revision's timed segments: the stored segments.json as written, behind the same
  // token and project check as GET by id (the article is looked up with the caller's token).
  const segmentFiles = opts.blobs && createImmutableFiles(opts.blobs, opts.segmentsCacheBytes);
  router.get("/api/articles/:articleId/segments", async (ctx) => {
    const call = publisherCall(ctx);
    const id = ctx.params.articleId;
    validate.articleId(id);
    const json = await reads.shared.run(`${call.headers.authorization} ${ctx.method} ${ctx.path}`, async () => {
      const a = (await client.getArticle({ id }, call)).article;
      if (!a) throw new HttpError(404, "Article not found");
      const key = a.status === ArticleStatus.READY ? a.transcript?.segments?.key : undefined;
      // Gone since the lookup (a delete or an update's clean-up): as if the revision had none.
      const data = key && segmentFiles ? await segmentFiles.get(key) : null;
      if (!data) throw noSegments();
      return data.toString("utf8");
    });
    ctx.set("Content-Type", JSON_TYPE);
    ctx.body = json;
  });

  router.put("/api/articles/:articleId", async (ctx) => {
    const call = publisherCall(ctx);
    validate.articleId(ctx.params.articleId);
    const body = await readBody(ctx, call.headers.authorization);
    validate.updateBody(body);
    const res = await client.updateArticle(updateRequest({ case: "id", value: ctx.params.articleId }, body as UpdateBody), call);
    ctx.body = { result: "ok", id: res.id };
  });

  router.delete("/api/articles/:articleId", async (ctx) => {
    const call = publisherCall(ctx);
    validate.articleId(ctx.params.articleId);
    await client.deleteArticle({ id: ctx.params.articleId }, call);
    ctx.body = { result: "ok" };
  });

  // Audio on demand: renders a parked article now (preview first); answers the article as GET does.
  router.post("/api/articles/:articleId/audio", async (ctx) => {
    const call = publisherCall(ctx);
    validate.articleId(ctx.params.articleId);
    await opts.checkWriter?.(call.headers.authorization);
    ctx.body = found((await client.requestArticleAudio({ id: ctx.params.articleId }, call)).article, base(ctx));
  });

  router.get("/api/articles_external_id/:externalId", async (ctx) => {
    const call = publisherCall(ctx);
    const externalId = ctx.params.externalId;
    validate.externalId(externalId);
    const b = base(ctx);
    await sharedRead(reads, ctx, call.headers.authorization, b, ctx.path, async () => found((await client.getArticleByExternalId({ externalId }, call)).article, b));
  });

  router.put("/api/articles_external_id/:externalId", async (ctx) => {
    const call = publisherCall(ctx);
    validate.externalId(ctx.params.externalId);
    const body = await readBody(ctx, call.headers.authorization);
    validate.updateBody(body);
    const res = await client.updateArticle(updateRequest({ case: "externalId", value: ctx.params.externalId }, body as UpdateBody), call);
    ctx.body = { result: "ok", id: res.id };
  });

  router.get(`${EXTERNAL_URL_PREFIX}*externalUrl`, async (ctx) => {
    const call = publisherCall(ctx);
    const url = externalUrlOf(ctx.path, ctx.querystring);
    validate.externalUrl(url);
    const b = base(ctx);
    await sharedRead(reads, ctx, call.headers.authorization, b, `${EXTERNAL_URL_PREFIX} ${url}`, async () => found((await client.getArticleByUrl({ url }, call)).article, b));
  });
}
