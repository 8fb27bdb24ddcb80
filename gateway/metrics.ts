// Gateway side of the metrics: a latency histogram of every request, labelled by route template so article ids and audio keys
// never become label values.
import type { Context, Next } from "koa";
import { httpDuration, metricsText } from "../lib/metrics.js";

const METRICS_PATH = "/metrics";

/** The route as declared ("/api/articles/:articleId"); requests no route matched share one label. */
function routeOf(ctx: Context): string {
  const matched = (ctx as Context & { _matchedRoute?: unknown })._matchedRoute;
  return typeof matched === "string" ? matched : "unmatched";
}

const statusLabels: string[] = [];
/** The status as a label value, one string per status for the life of the process. */
function statusLabel(status: number): string {
  return (statusLabels[status] ??= String(status));
}

/**
 * `serve`: also answer GET /metrics for the whole process on this (public)
 * port. Off by default: the numbers describe other tenants' traffic, so they
 * belong on the METRICS_PORT listener that only the cluster can reach.
 */
export function gatewayMetrics(opts: { serve: boolean } = { serve: false }) {
  return async (ctx: Context, next: Next): Promise<void> => {
    if (opts.serve && ctx.path === METRICS_PATH && (ctx.method === "GET" || ctx.method === "HEAD")) {
      const { contentType, body } = await metricsText();
      ctx.type = contentType;
      ctx.body = body;
      return;
    }
    const started = performance.now();
    // Timed until the response is fully written (audio streams included), or the client went away.
    ctx.res.on("close", () => httpDuration.series(ctx.method, routeOf(ctx), statusLabel(ctx.res.statusCode)).observe((performance.now() - started) / 1000));
    await next();
  };
}
