// Probes. /livez: the process answers. /healthz: every backing service says
// SERVING on grpc.health.v1 within a second. /readyz: healthy and not
// draining, so a load balancer stops sending traffic before shutdown.
import type { Client } from "@connectrpc/connect";
import type { Router } from "@koa/router";
import { Health, HealthCheckResponse_ServingStatus } from "../../gen/grpc/health/v1/health_pb.js";
import { rpcClient } from "../../lib/rpc/client.js";

export interface HealthTarget {
  name: string;
  url: string;
}

const CHECK_TIMEOUT_MS = 1_000;

export function healthChecker(targets: HealthTarget[]): () => Promise<{ healthy: boolean; services: Record<string, string> }> {
  const clients: [string, Client<typeof Health>][] = targets.map((t) => [t.name, rpcClient(Health, t.url, { timeoutMs: CHECK_TIMEOUT_MS })]);
  return async () => {
    const entries = await Promise.all(
      clients.map(async ([name, client]): Promise<[string, string]> => {
        try {
          const res = await client.check({ service: "" }, { timeoutMs: CHECK_TIMEOUT_MS });
          return [name, HealthCheckResponse_ServingStatus[res.status] ?? "UNKNOWN"];
        } catch {
          return [name, "UNREACHABLE"];
        }
      }),
    );
    const services = Object.fromEntries(entries);
    return { healthy: entries.every(([, s]) => s === "SERVING"), services };
  };
}

export function healthRoutes(router: Router, targets: HealthTarget[], isServing: () => boolean): void {
  const check = healthChecker(targets);

  router.get("/livez", (ctx) => {
    ctx.body = { result: "ok" };
  });

  router.get("/healthz", async (ctx) => {
    const { healthy, services } = await check();
    ctx.status = healthy ? 200 : 503;
    ctx.body = { result: healthy ? "ok" : "error", services };
  });

  router.get("/readyz", async (ctx) => {
    const serving = isServing();
    const { healthy, services } = serving ? await check() : { healthy: false, services: {} };
    const ready = serving && healthy;
    ctx.status = ready ? 200 : 503;
    ctx.body = { result: ready ? "ok" : "error", serving, services };
  });
}
