// ArticleJobsService: starting, reading and cancelling bulk jobs, scoped by the
// caller's project. A start checks everything and resolves a filter to the ids
// it matches now (what the editor confirmed), stores the job and hands it to
// this process's runner; the call answers before the first article is touched.
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, type ServiceImpl } from "@connectrpc/connect";
import { BulkJobSchema, type ArticleJobsService, type BulkJob as BulkJobProto, type StartBulkJobRequest } from "../../../gen/articles/v1/jobs_pb.js";
import { randomBytes } from "node:crypto";
import type { HandlerShared } from "../handlers/context.js";
import { ARTICLE_STATUSES, type ArticleStatus, type ListFilter } from "../store/port.js";
import { SEARCH_BOUNDS } from "../store/search.js";
import * as v from "../validate.js";
import { BULK_ACTIONS, JobRunningError, type BulkAction, type BulkJob, type JobStore } from "./port.js";
import type { JobRunner } from "./runner.js";

/** Most articles one job takes (docs/limits.md); a larger filter is refused: narrow it or run several jobs. */
export const MAX_JOB_ARTICLES = 10_000;

/** Ids read per list call while a filter is resolved. */
const RESOLVE_PAGE = 1_000;

const iso = (ms: number) => new Date(ms).toISOString();

export function jobToProto(j: BulkJob): BulkJobProto {
  return create(BulkJobSchema, {
    id: j.id,
    action: j.action,
    state: j.state,
    total: j.total,
    done: j.done,
    failed: j.failed,
    remaining: Math.max(0, j.total - j.done - j.failed),
    errors: j.errors.map((e) => ({ articleId: e.articleId, error: e.error })),
    reason: j.reason,
    labels: j.labels,
    created: iso(j.createdAt),
    finished: j.finishedAt === undefined ? undefined : iso(j.finishedAt),
  });
}

const busy = (jobId = "{id}") =>
  new ConnectError(
    `This project is already running a bulk job (${jobId}); one job runs at a time. Wait for it to finish (GET /api/jobs/${jobId}) or cancel it (DELETE /api/jobs/${jobId}), then start this one again.`,
    Code.ResourceExhausted,
  );

function actionOf(value: string): BulkAction {
  if (!(BULK_ACTIONS as readonly string[]).includes(value)) throw v.invalid(`action must be one of: ${BULK_ACTIONS.join(", ")}`);
  return value as BulkAction;
}

function labelsFor(action: BulkAction, labels: readonly string[]): string[] {
  if (action === "addLabels" || action === "removeLabels") {
    if (labels.length === 0) throw v.invalid(`labels: ${action} needs at least one label`);
    return v.labelList(labels);
  }
  if (labels.length > 0) throw v.invalid(`labels: only addLabels and removeLabels take labels`);
  return [];
}

function idsOf(ids: readonly string[]): string[] {
  if (ids.length > MAX_JOB_ARTICLES) throw v.invalid(`ids: a job takes at most ${MAX_JOB_ARTICLES} articles (got ${ids.length})`);
  for (const [i, id] of ids.entries()) v.requiredId(`ids[${i}]`, id);
  return [...new Set(ids)];
}

export function jobHandlers(s: HandlerShared, jobs: JobStore, runner: JobRunner): ServiceImpl<typeof ArticleJobsService> {
  const { store, publisher, log } = s;

  function filterOf(f: NonNullable<StartBulkJobRequest["filter"]>): ListFilter {
    let status: ArticleStatus | undefined;
    if (f.status !== "") {
      if (!(ARTICLE_STATUSES as readonly string[]).includes(f.status)) throw v.invalid(`filter.status must be one of: ${ARTICLE_STATUSES.join(", ")}`);
      status = f.status as ArticleStatus;
    }
    const label = f.label === "" ? undefined : v.labelFilter(f.label);
    // The list's own search (GET /api/articles?q=): the same words find the same articles.
    const words = f.q === "" ? undefined : v.searchWords(f.q);
    return { status, label, ...(words === undefined ? {} : { words }) };
  }

  /** The ids the filter matches now, newest first; refused beyond the maximum. */
  async function resolve(projectId: string, filter: ListFilter): Promise<string[]> {
    // A search counts as far as a job could take, not only as far as the list counts (SEARCH_BOUNDS).
    const bounded: ListFilter = filter.words ? { ...filter, searchBounds: { ...SEARCH_BOUNDS, countUpTo: MAX_JOB_ARTICLES } } : filter;
    const first = await store.list(projectId, RESOLVE_PAGE, 0, bounded);
    if (first.countCapped || first.count > MAX_JOB_ARTICLES) throw v.invalid(`the filter matches ${first.countCapped ? "more than " : ""}${first.count} articles; a job takes at most ${MAX_JOB_ARTICLES}: narrow the filter or run several jobs`);
    const ids = first.items.map((a) => a.id);
    for (let offset = RESOLVE_PAGE; ids.length < first.count && offset < MAX_JOB_ARTICLES; offset += RESOLVE_PAGE) {
      const page = await store.list(projectId, RESOLVE_PAGE, offset, bounded);
      if (page.items.length === 0) break;
      ids.push(...page.items.map((a) => a.id));
    }
    return [...new Set(ids)];
  }

  return {
    async startBulkJob(req, ctx) {
      const caller = await publisher(ctx, "full");
      const action = actionOf(req.action);
      const labels = labelsFor(action, req.labels);
      if (req.ids.length > 0 && req.filter) throw v.invalid("give either ids or filter, not both");
      if (req.ids.length === 0 && !req.filter) throw v.invalid("ids (a non-empty list) or filter is required");
      const filter = req.filter ? filterOf(req.filter) : undefined;
      // Cheap check first: a busy project does not pay for resolving its filter.
      const running = await jobs.running(caller.projectId);
      if (running) throw busy(running.id);
      const targets = filter ? await resolve(caller.projectId, filter) : idsOf(req.ids);
      if (targets.length === 0) throw v.invalid("no article matches the filter: there is nothing to do");
      const id = `job_${randomBytes(9).toString("base64url")}`;
      try {
        const job = await jobs.create({ id, projectId: caller.projectId, action, labels }, targets, runner.owner, runner.leaseUntil());
        log.info({ jobId: id, projectId: caller.projectId, action, total: targets.length }, "bulk job started");
        runner.run(job);
        return { job: jobToProto(job) };
      } catch (e) {
        if (e instanceof JobRunningError) throw busy(e.jobId);
        throw e;
      }
    },

    async getBulkJob(req, ctx) {
      const caller = await publisher(ctx, "read");
      const id = v.requiredId("id", req.id);
      const job = await jobs.get(caller.projectId, id);
      if (!job) throw new ConnectError(`Job '${id}' not found`, Code.NotFound);
      return { job: jobToProto(job) };
    },

    async cancelBulkJob(req, ctx) {
      const caller = await publisher(ctx, "full");
      const id = v.requiredId("id", req.id);
      const job = await jobs.cancel(caller.projectId, id, "cancelled on request");
      if (!job) throw new ConnectError(`Job '${id}' not found`, Code.NotFound);
      log.info({ jobId: id, projectId: caller.projectId, state: job.state }, "bulk job cancel asked");
      return { job: jobToProto(job) };
    },
  };
}
