// Prometheus metrics: one registry per process, so the embedded launcher (all
// services in one process) exposes everything on a single /metrics. Metric
// objects are created here once; a second registration of the same name would
// throw, which is why services never define their own.
import http from "node:http";
import type net from "node:net";
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";
import type { Logger } from "./log.js";
import { TimedHistogram } from "./timed-histogram.js";

export const registry = new Registry();
collectDefaultMetrics({ register: registry });

// Internal RPCs are mostly sub-millisecond to tens of milliseconds; the tail
// covers ad-hoc synthesis calls.
// The per-request latencies (every RPC and HTTP request) are TimedHistograms: cheap to record.
const RPC_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
const HTTP_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
// Whole articles take seconds to minutes to render.
const JOB_BUCKETS = [0.5, 1, 2.5, 5, 10, 20, 30, 60, 120, 300, 600];
const SYNTH_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60];

export const rpcServerDuration = new TimedHistogram({
  name: "rpc_server_duration_seconds",
  help: "Time to answer an RPC, by service, method and Connect status code",
  labelNames: ["service", "method", "code"] as const,
  buckets: RPC_BUCKETS,
  registers: [registry],
});

export const rpcClientDuration = new TimedHistogram({
  name: "rpc_client_duration_seconds",
  help: "Time for an outgoing RPC to get its answer, by service, method and Connect status code",
  labelNames: ["service", "method", "code"] as const,
  buckets: RPC_BUCKETS,
  registers: [registry],
});

export const httpDuration = new TimedHistogram({
  name: "http_request_duration_seconds",
  help: "Gateway HTTP requests until the response is sent, by method, route template and status",
  labelNames: ["method", "route", "status"] as const,
  buckets: HTTP_BUCKETS,
  registers: [registry],
});

export const jobsInFlight = new Gauge({
  name: "audio_jobs_in_flight",
  help: "Audio jobs this process is handling right now",
  registers: [registry],
});

export const jobDuration = new Histogram({
  name: "audio_job_duration_seconds",
  help: "Time from receiving an audio job to its outcome, by outcome",
  labelNames: ["outcome"] as const,
  buckets: JOB_BUCKETS,
  registers: [registry],
});

export const queuePending = new Gauge({
  name: "audio_queue_jobs",
  help: "Audio jobs in the bus (sampled): pending = not yet delivered, unacked = delivered and not yet acknowledged",
  labelNames: ["state"] as const,
  registers: [registry],
});

export const synthesisDuration = new Histogram({
  name: "audio_synthesis_seconds",
  help: "Duration of one synthesis request to a speech provider",
  labelNames: ["provider"] as const,
  buckets: SYNTH_BUCKETS,
  registers: [registry],
});

export const providerErrors = new Counter({
  name: "audio_provider_errors_total",
  help: "Failed synthesis requests by provider and kind (input, aborted, timeout, unavailable, error)",
  labelNames: ["provider", "kind"] as const,
  registers: [registry],
});

export const articlesByStatus = new Gauge({
  name: "articles_by_status",
  help: "Stored articles per status (sampled from the articles store)",
  labelNames: ["status"] as const,
  registers: [registry],
});

/** The background pass giving an older archive the list order's keys (services/articles/store/order-upgrade.ts). */
export const orderUpgradeGiven = new Gauge({
  name: "articles_order_upgrade_given",
  help: "Articles given their list order keys so far by the background upgrade pass (over every start)",
  registers: [registry],
});
export const orderUpgradeRunning = new Gauge({
  name: "articles_order_upgrade_running",
  help: "1 while the background pass giving older articles their list order keys (or its index builds) runs, else 0",
  registers: [registry],
});

/** A coarse, bounded label for a failed provider call; free text would explode the series count. */
export function errorKind(err: unknown): string {
  const e = err as { name?: string; kind?: unknown; code?: unknown } | null;
  if (e && typeof e.kind === "string" && /^[a-z_]{1,32}$/.test(e.kind)) return e.kind;
  const name = e?.name ?? "";
  if (name === "AbortError") return "aborted";
  // The speech providers' ProviderError: an HTTP status and whether a retry may help.
  const p = err as { status?: unknown; retryable?: unknown } | null;
  if (p && p.status === 429) return "rate_limited";
  if (p && typeof p.status === "number" && p.status >= 500) return "server";
  if (p && p.retryable === true) return "transient";
  if (p && p.retryable === false) return "rejected";
  if (name === "TimeoutError" || e?.code === "ETIMEDOUT") return "timeout";
  if (/Input/.test(name)) return "input";
  if (e?.code === "ECONNREFUSED" || e?.code === "ECONNRESET" || e?.code === "ENOTFOUND") return "unavailable";
  return "error";
}

/** Times one provider call into audio_synthesis_seconds, counting failures by kind. */
export async function timeSynthesis<T>(provider: string, call: () => Promise<T>): Promise<T> {
  const end = synthesisDuration.startTimer({ provider });
  try {
    const out = await call();
    end();
    return out;
  } catch (err) {
    providerErrors.inc({ provider, kind: errorKind(err) });
    throw err;
  }
}

/**
 * Wraps a speech engine (anything with `name` and `synthesize`) so every
 * synthesize call is timed per provider; the rest of the object is untouched.
 */
export function instrumentSynthesis<E extends { readonly name: string; synthesize(...args: never[]): Promise<unknown> }>(engine: E): E {
  return new Proxy(engine, {
    get(target, prop, receiver) {
      if (prop !== "synthesize") {
        const v: unknown = Reflect.get(target, prop, receiver);
        // Methods run against the engine itself: a class with private fields rejects a proxy as `this`.
        return typeof v === "function" ? v.bind(target) : v;
      }
      return (...args: never[]) => timeSynthesis(target.name, () => target.synthesize(...args));
    },
  });
}

type Timed = { readonly name: string; synthesize(...args: never[]): Promise<unknown> };

/**
 * Wraps a speech router (`synthesize(step, ...)` where step.provider does the
 * request) so each request that reaches a provider is timed under its name;
 * cache hits never reach one and are not counted.
 */
export function instrumentProviders<R extends { synthesize(step: { provider: Timed }, ...rest: never[]): Promise<unknown> }>(router: R): R {
  const wrapped = new WeakMap<Timed, Timed>();
  const measured = (p: Timed) => {
    let w = wrapped.get(p);
    if (!w) wrapped.set(p, (w = instrumentSynthesis(p)));
    return w;
  };
  const synthesize = (step: { provider: Timed }, ...rest: never[]) => router.synthesize({ ...step, provider: measured(step.provider) }, ...rest);
  return Object.assign(Object.create(router) as R, { synthesize });
}

export interface Sampler {
  stop(): void;
}

/**
 * Runs `sample` now and then every intervalMs; a failure keeps the previous
 * values and is logged once per streak, so an outage does not flood the log.
 */
export function startSampler(what: string, sample: () => Promise<void>, intervalMs: number, log?: Logger): Sampler {
  let failing = false;
  let busy = false;
  const run = () => {
    if (busy) return;
    busy = true;
    sample()
      .then(() => {
        if (failing) log?.info(`${what} sampling recovered`);
        failing = false;
      })
      .catch((err: unknown) => {
        if (!failing) log?.warn({ err: err instanceof Error ? err.message : String(err) }, `${what} sampling failed`);
        failing = true;
      })
      .finally(() => (busy = false));
  };
  run();
  const timer = setInterval(run, intervalMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}

/** Samples articles_by_status from a store that can count per status. */
export function sampleArticleStatuses(
  store: { countByStatus?(): Promise<Partial<Record<string, number>>> },
  intervalMs = 15_000,
  log?: Logger,
): Sampler | undefined {
  if (!store.countByStatus) return undefined;
  const count = store.countByStatus.bind(store);
  return startSampler(
    "articles by status",
    async () => {
      const counts = await count();
      for (const [status, n] of Object.entries(counts)) articlesByStatus.set({ status }, n ?? 0);
    },
    intervalMs,
    log,
  );
}

/** Samples audio_queue_jobs from a bus that can report its backlog. */
export function sampleQueue(
  bus: { backlog?(): Promise<{ pending: number; unacked: number }> },
  intervalMs = 10_000,
  log?: Logger,
): Sampler | undefined {
  if (!bus.backlog) return undefined;
  const backlog = bus.backlog.bind(bus);
  return startSampler(
    "job queue",
    async () => {
      const b = await backlog();
      queuePending.set({ state: "pending" }, b.pending);
      queuePending.set({ state: "unacked" }, b.unacked);
    },
    intervalMs,
    log,
  );
}

export async function metricsText(): Promise<{ contentType: string; body: string }> {
  return { contentType: registry.contentType, body: await registry.metrics() };
}

export interface MetricsServer {
  readonly port: number;
  readonly url: string;
  close(): Promise<void>;
}

/** A tiny listener that answers GET /metrics and nothing else (METRICS_PORT). */
export async function startMetricsServer(opts: { port: number; host?: string; log?: Logger }): Promise<MetricsServer> {
  const server = http.createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    if (path !== "/metrics" || (req.method !== "GET" && req.method !== "HEAD")) {
      res.writeHead(404, { "content-type": "text/plain" }).end("not found\n");
      return;
    }
    metricsText().then(
      ({ contentType, body }) => res.writeHead(200, { "content-type": contentType }).end(req.method === "HEAD" ? undefined : body),
      (err: unknown) => {
        opts.log?.error({ err }, "metrics collection failed");
        res.writeHead(500, { "content-type": "text/plain" }).end("metrics collection failed\n");
      },
    );
  });
  server.keepAliveTimeout = 65_000;
  const host = opts.host ?? "0.0.0.0";
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const port = (server.address() as net.AddressInfo).port;
  const url = `http://${host.includes(":") ? `[${host}]` : host}:${port}/metrics`;
  opts.log?.info({ url }, "metrics listening");
  return {
    port,
    url,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** Configuration every process reads for its metrics listener. */
export const METRICS_VARS = {
  METRICS_PORT: { type: "integer", minimum: 0, maximum: 65535, description: "Prometheus /metrics port; unset = no metrics listener (the public port serves /metrics only with METRICS_ON_PUBLIC_PORT=true)" },
  METRICS_HOST: { type: "string", default: "0.0.0.0", description: "bind address of the metrics listener" },
  METRICS_SAMPLE_MS: { type: "integer", minimum: 100, default: 15_000, description: "how often sampled gauges (articles by status, queue backlog) are refreshed" },
} as const;

/** Starts the metrics listener when METRICS_PORT is set. */
export async function maybeStartMetricsServer(cfg: { METRICS_PORT?: number; METRICS_HOST: string }, log: Logger): Promise<MetricsServer | undefined> {
  if (cfg.METRICS_PORT === undefined) return undefined;
  return startMetricsServer({ port: cfg.METRICS_PORT, host: cfg.METRICS_HOST, log });
}
