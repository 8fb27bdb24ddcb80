// Bulk actions: POST /api/articles/bulk starts a job (full token) and answers
// at once with its id; GET /api/jobs/{id} reads its progress (any token of the
// project); DELETE /api/jobs/{id} cancels it (full token). The articles service
// owns and runs the jobs (services/articles/jobs/); this only checks and shapes.
import type { Client } from "@connectrpc/connect";
import type { Router } from "@koa/router";
import type { Context } from "koa";
import type { ArticleJobsService, BulkJob } from "../../gen/articles/v1/jobs_pb.js";
import { readJsonBody } from "../body.js";
import { HttpError } from "../errors.js";
import { validateBulk } from "../schemas.js";
import type { WriterCheck } from "../writer-check.js";
import { publisherCall } from "../publisher-call.js";

export interface JobRoutesOptions {
  client: Client<typeof ArticleJobsService>;
  maxBodyBytes: number;
  /** Refuses a bad or read-only token before the body is read. */
  checkWriter?: WriterCheck;
}

/** The job as the API shows it (BulkJob in the OpenAPI document). */
export function jobJson(j: BulkJob | undefined): Record<string, unknown> {
  if (!j) throw new HttpError(502, "The articles service answered without the job");
  return {
    id: j.id,
    action: j.action,
    state: j.state,
    total: j.total,
    done: j.done,
    failed: j.failed,
    remaining: j.remaining,
    errors: j.errors.map((e) => ({ articleId: e.articleId, error: e.error })),
    ...(j.reason === undefined ? {} : { reason: j.reason }),
    labels: j.labels,
    created: j.created,
    ...(j.finished === undefined ? {} : { finished: j.finished }),
  };
}

function jobIdOf(ctx: Context): string {
  const id = ctx.params.jobId as string;
  validateBulk.jobId(id);
  return id;
}

export function jobRoutes(router: Router, opts: JobRoutesOptions): void {
  router.post("/api/articles/bulk", async (ctx) => {
    const call = publisherCall(ctx);
    await opts.checkWriter?.(call.headers.authorization);
    const body = validateBulk.body(await readJsonBody(ctx, opts.maxBodyBytes));
    const res = await opts.client.startBulkJob(
      {
        action: body.action,
        ids: body.ids ?? [],
        filter: body.filter && { q: body.filter.q ?? "", status: body.filter.status ?? "", label: body.filter.label ?? "" },
        labels: body.labels ?? [],
      },
      call,
    );
    const job = jobJson(res.job);
    ctx.status = 202;
    ctx.set("Location", `/api/jobs/${encodeURIComponent(String(job.id))}`);
    ctx.body = { result: "ok", id: job.id, job };
  });

  router.get("/api/jobs/:jobId", async (ctx) => {
    const call = publisherCall(ctx);
    const res = await opts.client.getBulkJob({ id: jobIdOf(ctx) }, call);
    ctx.body = { result: "ok", job: jobJson(res.job) };
  });

  router.delete("/api/jobs/:jobId", async (ctx) => {
    const call = publisherCall(ctx);
    const res = await opts.client.cancelBulkJob({ id: jobIdOf(ctx) }, call);
    ctx.body = { result: "ok", job: jobJson(res.job) };
  });
}
