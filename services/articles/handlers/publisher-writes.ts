// Publisher writes: create (handlers/create.ts), update and delete, each followed by admission.
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, type HandlerContext, type ServiceImpl } from "@connectrpc/connect";
import { CreateArticleRequestSchema, ItemErrorSchema, type ArticlesService, type ItemError } from "../../../gen/articles/v1/articles_pb.js";
import type { Logger } from "../../../lib/log.js";
import { requirePublisher } from "../../../lib/rpc/caller.js";
import { isSaneRequestId, requestIdFields, requestIdOf } from "../../../lib/rpc/request-id.js";
import { STORAGE_FAILURE_KEY } from "../../../lib/store/errors.js";
import { publicError } from "../errors.js";
import { DuplicateExternalIdError, type ArticlePatch } from "../store/port.js";
import { articleCreator } from "./create.js";
import * as v from "../validate.js";
import { createArticleWrites } from "./article-writes.js";
import { duplicate, EXISTING_ID_KEY, notFound, type HandlerShared } from "./context.js";

type Writes = Pick<ServiceImpl<typeof ArticlesService>, "createArticle" | "createArticles" | "updateArticle" | "deleteArticle" | "requestArticleAudio">;

/** Most creates in one CreateArticles call (the gateway's group commit sends at most this many). */
export const MAX_BATCH = 64;

const emptyCreate = create(CreateArticleRequestSchema);

/** `arrive()` resolves once all `n` have arrived. */
function countdown(n: number): { arrive(): Promise<void> } {
  let left = n;
  let open!: () => void;
  const all = new Promise<void>((resolve) => (open = resolve));
  return {
    arrive() {
      if (--left <= 0) open();
      return all;
    },
  };
}

/** An item's failure as a CreateArticle of its own would have reached the caller. */
function itemError(err: unknown, log: Logger, requestId: string | undefined): ItemError {
  const e = publicError(err, log, "CreateArticles", requestId);
  return create(ItemErrorSchema, { code: e.code, message: e.rawMessage, storageFailure: e.metadata.get(STORAGE_FAILURE_KEY) ?? "", existingId: e.metadata.get(EXISTING_ID_KEY) ?? "" });
}

export function publisherWriteHandlers(s: HandlerShared): Writes {
  const { store, log, emit, publisher, admitNow, requestAudio, toProto } = s;
  const writes = createArticleWrites(s);

  const { createAnswered: createOne } = articleCreator(s);

  /** A publisher's batch goes to its own project; the internal token (operator imports) names the project. */
  async function batchProject(requested: string, ctx: HandlerContext): Promise<string> {
    const caller = await s.deps.resolveCaller(ctx.requestHeader);
    if (caller.kind === "internal") return v.requiredId("projectId", requested);
    const own = requirePublisher(caller, "full").projectId;
    if (requested !== "" && requested !== own) throw new ConnectError("projectId may only be given with the internal token", Code.PermissionDenied);
    return own;
  }

  return {
    async requestArticleAudio(req, ctx) {
      const caller = await publisher(ctx, "full");
      const id = v.requiredId("id", req.id);
      const a = await store.get(caller.projectId, id);
      if (!a) throw notFound(`'${id}'`);
      if (a.status === "deleted") throw v.invalid(`Article '${id}' is deleted; its audio cannot be requested`);
      // Not parked (immediate, already asked for, ready, …): answered as it is.
      return { article: toProto(await requestAudio(a, requestIdOf(ctx))) };
    },
    async createArticle(req, ctx) {
      const caller = await publisher(ctx, "full");
      return createOne(caller.projectId, req, requestIdOf(ctx));
    },

    async createArticles(req, ctx) {
      const projectId = await batchProject(req.projectId, ctx);
      if (req.items.length === 0 || req.items.length > MAX_BATCH) throw v.invalid(`a batch holds 1 to ${MAX_BATCH} creates, got ${req.items.length}`);
      // Each item on its own, as CreateArticle would answer it: one item's failure is not the others'.
      // Their language detections take turns with other projects' creates (lib/fair-turns.ts); the
      // items then wait for each other, so the batch is still stored with one write.
      const checked = countdown(req.items.length);
      const results = await Promise.all(
        req.items.map(async (item) => {
          const requestId = isSaneRequestId(item.requestId) ? item.requestId : undefined;
          let arrived = false;
          const beforeStore = () => {
            arrived = true;
            return checked.arrive();
          };
          try {
            const made = await createOne(projectId, item.article ?? emptyCreate, requestId, beforeStore);
            return { outcome: { case: "id" as const, value: made.id }, warning: made.warning ?? "" };
          } catch (err) {
            return { outcome: { case: "error" as const, value: itemError(err, log, requestId) } };
          } finally {
            // Refused before it was checked: the others need not wait for it.
            if (!arrived) void checked.arrive();
          }
        }),
      );
      return { results };
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
        published: req.published ? (req.published.clear ? null : v.publishedValue(req.published.value)) : undefined,
        admission: "pending",
      };
      // A voice chosen now answers the warning about the language the previous one was chosen for.
      if (patch.voice !== undefined) patch.warning = null;

      const what = target.case === "id" ? `'${target.value}'` : `with externalId '${target.value}'`;
      const lookup = () => (target.case === "id" ? store.get(caller.projectId, target.value) : store.getByExternalId(caller.projectId, target.value));
      const a = await writes.revise(caller.projectId, lookup, what, patch, requestIdOf(ctx));
      return { id: a.id };
    },

    async deleteArticle(req, ctx) {
      const caller = await publisher(ctx, "full");
      const id = v.requiredId("id", req.id);
      await writes.remove(caller.projectId, id, requestIdOf(ctx));
      return {};
    },
  };
}
