// The update and delete of one article, shared by the single calls
// (publisher-writes.ts) and bulk jobs (jobs/actions.ts), so an article of a job
// goes through exactly what its own PUT or DELETE would: the same checks,
// refunds, events, file clean-up and admission (limits and credit).
import { Code, ConnectError } from "@connectrpc/connect";
import { requestIdFields } from "../../../lib/rpc/request-id.js";
import { DuplicateExternalIdError, type ArticlePatch, type StoredArticle } from "../store/port.js";
import * as v from "../validate.js";
import { duplicate, notFound, type HandlerShared } from "./context.js";

export type ArticleWrites = ReturnType<typeof createArticleWrites>;

export function createArticleWrites(s: HandlerShared) {
  const { store, log, emit, admitNow, refundUnused, audioFiles } = s;

  /**
   * A new revision with `patch` applied, admitted at once; answers the new revision as stored (before admission).
   * `lookup` reads the current article (by id or external id); `what` names it in errors.
   */
  async function revise(projectId: string, lookup: () => Promise<StoredArticle | null>, what: string, patch: ArticlePatch, requestId: string | undefined): Promise<StoredArticle> {
    // Concurrent edits of one article: each retry re-reads the revision, so the last writer wins cleanly.
    for (let attempt = 0; attempt < 5; attempt++) {
      const current = await lookup();
      if (!current) throw notFound(what);
      if (current.status === "deleted") throw v.invalid(`Article ${what} is deleted and cannot be updated`);
      if (patch.externalId !== undefined && patch.externalId !== current.externalId) {
        const holder = await store.getByExternalId(projectId, patch.externalId);
        if (holder && holder.id !== current.id) throw duplicate(patch.externalId);
      }
      // Before the update: the new revision drops the old reservation, which then could not be found to refund.
      await refundUnused(current);
      let outcome;
      try {
        outcome = await store.update(projectId, current.id, current.revision, patch);
      } catch (e) {
        if (e instanceof DuplicateExternalIdError) throw duplicate(e.externalId);
        throw e;
      }
      if (outcome.ok) {
        log.info({ articleId: current.id, projectId, revision: outcome.article.revision, ...requestIdFields(requestId) }, "article updated");
        emit(outcome.article);
        // The old revision's URLs are no longer handed out; listeners already on them get the grace period.
        audioFiles?.supersede(current.id, outcome.article.revision);
        await admitNow(outcome.article, requestId);
        return outcome.article;
      }
      if (outcome.reason === "deleted") throw v.invalid(`Article ${what} is deleted and cannot be updated`);
      if (outcome.reason === "not_found") throw notFound(what);
    }
    throw new ConnectError(`Article ${what} is being changed concurrently; try again`, Code.Aborted);
  }

  /** Marks the article deleted and takes its audio down; idempotent. */
  async function remove(projectId: string, id: string, requestId: string | undefined): Promise<void> {
    const before = await store.get(projectId, id);
    const a = await store.markDeleted(projectId, id);
    if (!a) throw notFound(`'${id}'`);
    if (before && before.status !== "deleted") {
      emit(a);
      await refundUnused(before);
    }
    // Also when it was deleted before: a repeated DELETE retries a takedown that failed.
    await audioFiles?.removeAll(id);
    log.info({ articleId: id, projectId, ...requestIdFields(requestId) }, "article deleted");
  }

  return { revise, remove };
}
