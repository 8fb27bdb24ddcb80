// Listening statistics for publishers (bearer token, read or full): one
// article's days, or the whole project's days and its most played articles
// (with their titles, so a dashboard needs no lookup per row).
import type { Client } from "@connectrpc/connect";
import type { Router } from "@koa/router";
import type { Context } from "koa";
import type { ListenerService, StatsFigures, StatsReport } from "../../gen/articles/v1/listener_pb.js";
import { HttpError } from "../errors.js";
import { validateListener } from "../listener-schemas.js";
import { validate } from "../schemas.js";
import { publisherCall } from "../publisher-call.js";

function figuresJson(f: StatsFigures | undefined): Record<string, number> {
  const n = (v: bigint | undefined) => Number(v ?? 0n);
  const plays = n(f?.plays);
  const completions = n(f?.completions);
  return {
    impressions: n(f?.impressions),
    plays,
    progress25: n(f?.progress25),
    progress50: n(f?.progress50),
    progress75: n(f?.progress75),
    completions,
    listenThroughRate: plays === 0 ? 0 : Math.round((completions / plays) * 1000) / 1000,
    secondsListened: f?.secondsListened ?? 0,
    downloads: n(f?.downloads),
  };
}

const SOURCES = ["player", "embed", "console", "podcast"] as const;

function reportJson(r: StatsReport | undefined, withArticles: boolean): Record<string, unknown> {
  if (!r) throw new HttpError(502, "The articles service answered without a report");
  const out: Record<string, unknown> = {
    result: "ok",
    from: r.from,
    to: r.to,
    total: figuresJson(r.total),
    days: r.days.map((d) => ({ day: d.day, ...figuresJson(d.figures) })),
    bySource: Object.fromEntries(SOURCES.map((s) => [s, figuresJson(r.bySource.find((b) => b.source === s)?.figures)])),
  };
  if (withArticles) out.articles = r.articles.map((a) => ({ articleId: a.articleId, title: a.title || null, ...figuresJson(a.figures) }));
  return out;
}

function range(ctx: Context): { from: string; to: string } {
  const q: Record<string, unknown> = { ...ctx.query };
  validateListener.statsQuery(q);
  return { from: (q.from as string) ?? "", to: (q.to as string) ?? "" };
}

export function statsRoutes(router: Router, listener: Client<typeof ListenerService>): void {
  router.get("/api/articles/:articleId/stats", async (ctx) => {
    const c = publisherCall(ctx);
    validate.articleId(ctx.params.articleId);
    const res = await listener.getArticleStats({ articleId: ctx.params.articleId, ...range(ctx) }, c);
    ctx.body = reportJson(res.report, false);
  });

  router.get("/api/stats", async (ctx) => {
    const c = publisherCall(ctx);
    const res = await listener.getProjectStats(range(ctx), c);
    ctx.body = reportJson(res.report, true);
  });
}
