// Gateway side of the metrics: GET /metrics for the whole process (in the
// embedded launcher that is every service) and a latency histogram of every
// other request, labelled by route template so article ids and audio keys
// never become label values.
import type { Context, Next } from "koa";
import { httpDuration, metricsText } from "../lib/metrics.js";

const METRICS_PATH = "/metrics";

/** The route as declared ("/api/articles/:articleId"); requests no route matched share one label. */
function routeOf(ctx: Context): string {
  const matched = (ctx as Context & { _matchedRoute?: unknown })._matchedRoute;
  return typeof matched === "string" ? matched : "unmatched";
}

export function gatewayMetrics() {
  return async (ctx: Context, next: Next): Promise<void> => {
    if (ctx.path === METRICS_PATH && (ctx.method === "GET" || ctx.method === "HEAD")) {
      const { contentType, body } = await metricsText();
      ctx.type = contentType;
      ctx.body = body;
      return;
    }
    const end = httpDuration.startTimer();
    // Timed until the response is fully written (audio streams included), or the client went away.
    ctx.res.once("close", () => end({ method: ctx.method, route: routeOf(ctx), status: String(ctx.res.statusCode) }));
    await next();
  };
}
