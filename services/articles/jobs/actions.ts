// What a bulk job does to one article. Regenerate and delete go through the
// single calls' own path (handlers/article-writes.ts), so limits, credit,
// refunds, events and file clean-up apply as they would to a PUT or DELETE;
// labels change without a new revision (no new audio, nothing charged).
import { Code, ConnectError } from "@connectrpc/connect";
import type { ArticleWrites } from "../handlers/article-writes.js";
import { isParked, type ArticleStore, type StoredArticle } from "../store/port.js";
import { LIMITS } from "../validate.js";
import type { BulkJob } from "./port.js";

/** `stop`: the job cannot go on (the daily limit or the credit ran out); the article counts as failed with `error`. */
export type ActOutcome = { ok: true } | { ok: false; error: string; stop?: string };

export type BulkAct = (job: BulkJob, articleId: string) => Promise<ActOutcome>;

/** Errors that say something about the article; anything else (a store that failed) is the job's problem, thrown. */
const ARTICLE_CODES = new Set([Code.NotFound, Code.InvalidArgument, Code.AlreadyExists, Code.FailedPrecondition, Code.Aborted]);

function articleError(err: unknown): ActOutcome {
  if (err instanceof ConnectError && ARTICLE_CODES.has(err.code)) return { ok: false, error: err.rawMessage };
  throw err;
}

function stopped(a: StoredArticle): ActOutcome | undefined {
  if (a.status !== "limit_reached" && a.status !== "no_money") return undefined;
  const why = a.status === "limit_reached" ? "the project's daily limit is used up for today (UTC)" : "the project's credit is used up";
  const detail = a.decision?.detail ?? why;
  return { ok: false, error: `regenerated, but waits: ${detail}; it is admitted when the day turns or credit is added`, stop: `stopped: ${why}` };
}

export function createBulkActions(deps: { store: ArticleStore; writes: ArticleWrites }): BulkAct {
  const { store, writes } = deps;

  async function relabel(job: BulkJob, id: string): Promise<ActOutcome> {
    for (let attempt = 0; attempt < 5; attempt++) {
      const a = await store.get(job.projectId, id);
      if (!a) return { ok: false, error: `Article '${id}' not found` };
      if (a.status === "deleted") return { ok: false, error: `Article '${id}' is deleted` };
      const labels = job.action === "addLabels" ? [...a.labels, ...job.labels.filter((l) => !a.labels.includes(l))] : a.labels.filter((l) => !job.labels.includes(l));
      if (labels.length === a.labels.length && labels.every((l, i) => l === a.labels[i])) return { ok: true };
      if (labels.length > LIMITS.labels) return { ok: false, error: `Article '${id}' would carry more than ${LIMITS.labels} labels` };
      const outcome = await store.relabel(job.projectId, id, a.revision, labels);
      if (outcome.ok) return { ok: true };
      if (outcome.reason !== "revision_changed") return { ok: false, error: `Article '${id}' ${outcome.reason === "deleted" ? "is deleted" : "not found"}` };
    }
    return { ok: false, error: `Article '${id}' is being changed concurrently` };
  }

  async function regenerate(job: BulkJob, id: string): Promise<ActOutcome> {
    const a = await store.get(job.projectId, id);
    if (!a) return { ok: false, error: `Article '${id}' not found` };
    if (a.status === "deleted") return { ok: false, error: `Article '${id}' is deleted` };
    // Audio on demand not asked for yet: there is nothing to regenerate; it is read with today's rules when asked for.
    if (isParked(a)) return { ok: true };
    await writes.revise(job.projectId, () => store.get(job.projectId, id), `'${id}'`, { admission: "pending" }, `job:${job.id}`);
    const after = await store.get(job.projectId, id);
    return (after && stopped(after)) ?? { ok: true };
  }

  return async (job, id) => {
    try {
      switch (job.action) {
        case "regenerate":
          return await regenerate(job, id);
        case "delete":
          await writes.remove(job.projectId, id, `job:${job.id}`);
          return { ok: true };
        case "addLabels":
        case "removeLabels":
          return await relabel(job, id);
      }
    } catch (err) {
      return articleError(err);
    }
  };
}
