// RPC latency histograms for both ends of a call. Only unary calls are timed:
// a server stream (health watch) lives as long as its client wants, which
// says nothing about latency.
import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { rpcClientDuration, rpcServerDuration } from "../metrics.js";
import type { TimedHistogram } from "../timed-histogram.js";

/** "NotFound" → "not_found", the Connect protocol's spelling. */
export function codeLabel(code: Code | undefined): string {
  if (code === undefined) return "ok";
  return (Code[code] ?? "unknown").replace(/([a-z])([A-Z])/g, "$1_$2").toLowerCase();
}

function timing(histogram: TimedHistogram<"service" | "method" | "code">): Interceptor {
  return (next) => async (req) => {
    if (req.stream) return next(req);
    const started = performance.now();
    try {
      const res = await next(req);
      histogram.series(req.service.typeName, req.method.name, "ok").observe((performance.now() - started) / 1000);
      return res;
    } catch (err) {
      histogram.series(req.service.typeName, req.method.name, codeLabel(ConnectError.from(err).code)).observe((performance.now() - started) / 1000);
      throw err;
    }
  };
}

export const rpcServerMetrics = (): Interceptor => timing(rpcServerDuration);
export const rpcClientMetrics = (): Interceptor => timing(rpcClientDuration);
