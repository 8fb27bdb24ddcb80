// Creates of one token that arrive while an earlier one is on its way to the
// articles service go together as one CreateArticles call (a group commit,
// lib/group-commit.ts). Under load the cost of a call (HTTP/2 stream, headers,
// the service's per-call work) is paid per batch instead of per create; an idle
// token's create goes at once as a plain CreateArticle, so nothing waits.
// Keyed by token, so one project's slow creates never hold another's; creates
// with content work ahead of them are not batched at all.
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, type Client } from "@connectrpc/connect";
import { CreateArticlesItemSchema, type ArticlesService, type CreateArticleRequest, type ItemError } from "../gen/articles/v1/articles_pb.js";
import { groupCommit } from "../lib/group-commit.js";
import { REQUEST_ID_HEADER } from "../lib/rpc/request-id.js";
import { STORAGE_FAILURE_KEY } from "../lib/store/errors.js";

/** Most creates per call; the articles service accepts up to 64 (MAX_BATCH there). */
const MAX_BATCH = 64;
/**
 * Creates with content work ahead of them (HTML to parse, long text to classify)
 * go alone: their cost is that work, not the call, and in a batch they would hold
 * the quick ones of their project behind them.
 */
const QUICK_TEXT_CHARS = 2_000;

/** A create's id, and what the publisher should know about it (CreateArticleResponse.warning). */
export interface Created {
  id: string;
  warning?: string;
}

type Outcome = Created | { error: ConnectError };

interface Item {
  article: Omit<CreateArticleRequest, "$typeName">;
  requestId: string;
}

/** The item's error as the service would have thrown it for a CreateArticle of its own. */
export function errorOf(e: ItemError): ConnectError {
  const metadata = e.storageFailure ? { [STORAGE_FAILURE_KEY]: e.storageFailure } : undefined;
  const code = e.code in Code ? (e.code as Code) : Code.Unknown;
  return new ConnectError(e.message, code, metadata);
}

export type CreateArticleFn = (authorization: string, requestId: string, article: Item["article"]) => Promise<Created>;

/** Runs a token's call when its project's turn comes (import-lanes.ts createLane). */
export type CreateTurn = <T>(authorization: string, call: () => Promise<T>) => Promise<T>;

/** `turn`: where each call waits for its project's turn among the gateway's creates; default: none, at once. */
export function createBatcher(client: Client<typeof ArticlesService>, turn: CreateTurn = (_authorization, call) => call()): CreateArticleFn {
  const createOne = (authorization: string, item: Item) =>
    turn(authorization, async (): Promise<Created> => {
      const res = await client.createArticle(item.article, { headers: { authorization, [REQUEST_ID_HEADER]: item.requestId } });
      return res.warning ? { id: res.id, warning: res.warning } : { id: res.id };
    });
  const send = groupCommit<string, Item, Outcome>(
    async (authorization, items) => {
      if (items.length === 1) return [await createOne(authorization, items[0])];
      const headers = { authorization, [REQUEST_ID_HEADER]: items[0].requestId };
      // Creates of this token that arrive while the call waits for its turn gather into the next batch.
      const res = await turn(authorization, () => client.createArticles({ items: items.map((i) => create(CreateArticlesItemSchema, { article: i.article, requestId: i.requestId })) }, { headers }));
      return res.results.map((r): Outcome => {
        if (r.outcome.case === "id") return r.warning ? { id: r.outcome.value, warning: r.warning } : { id: r.outcome.value };
        if (r.outcome.case === "error") return { error: errorOf(r.outcome.value) };
        return { error: new ConnectError("the articles service answered a create without an outcome", Code.Internal) };
      });
    },
    { maxBatch: MAX_BATCH, gatherTurn: true },
  );
  return async (authorization, requestId, article) => {
    if (article.parse || article.text.length > QUICK_TEXT_CHARS) return createOne(authorization, { article, requestId });
    const outcome = await send(authorization, { article, requestId });
    if ("error" in outcome) throw outcome.error;
    return outcome;
  };
}
