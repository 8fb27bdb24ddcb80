// RPC latency histograms for both ends of a call. Only unary calls are timed:
// a server stream (health watch) lives as long as its client wants, which
// says nothing about latency.
import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import type { Histogram } from "prom-client";
import { rpcClientDuration, rpcServerDuration } from "../metrics.js";

/** "NotFound" → "not_found", the Connect protocol's spelling. */
export function codeLabel(code: Code | undefined): string {
  if (code === undefined) return "ok";
  return (Code[code] ?? "unknown").replace(/([a-z])([A-Z])/g, "$1_$2").toLowerCase();
}

function timing(histogram: Histogram<"service" | "method" | "code">): Interceptor {
  return (next) => async (req) => {
    if (req.stream) return next(req);
    const end = histogram.startTimer({ service: req.service.typeName, method: req.method.name });
    try {
      const res = await next(req);
      end({ code: "ok" });
      return res;
    } catch (err) {
      end({ code: codeLabel(ConnectError.from(err).code) });
      throw err;
    }
  };
}

export const rpcServerMetrics = (): Interceptor => timing(rpcServerDuration);
export const rpcClientMetrics = (): Interceptor => timing(rpcClientDuration);
