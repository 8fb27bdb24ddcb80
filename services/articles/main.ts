// Process entry point of the articles service (one process per service).
import { AuthService } from "../../gen/auth/v1/auth_pb.js";
import { BUS_VARS, DATA_VARS, openBlobStore, openJobBus } from "../../lib/adapters.js";
import { PlayerService } from "../../gen/auth/v1/player_pb.js";
import { ConfigError, loadConfig } from "../../lib/config.js";
import { logger } from "../../lib/log.js";
import { closeMongo } from "../../lib/mongo.js";
import { closeRpcClients, rpcClient } from "../../lib/rpc/client.js";
import { maybeStartMetricsServer, METRICS_VARS, sampleArticleStatuses } from "../../lib/metrics.js";
import { audioBaseUrlOf, PUBLIC_URL_VARS } from "../../lib/public-url.js";
import { onShutdown, runMain, SHUTDOWN_VARS } from "../../lib/service.js";
import { privateAllowList, startArticlesService } from "./app.js";
import { AUDIO_FILES_VARS } from "./audio-files.js";
import { openStatsStore } from "./stats/open.js";
import { openSourceStore } from "./sources/open.js";
import { SOURCE_VARS, sourceOptionsOf } from "./sources/config.js";
import { listeningNames, natsListeningChannel } from "../../lib/bus/listening.js";
import { ARTICLES_UPGRADE, openArticleStore } from "./store/open.js";
import { ON_DEMAND_BUDGET_VARS, onDemandBudgetDefaults } from "./on-demand-budget.js";
import { PAGE_FETCH_VARS, pageQueueLimits } from "./pages/queue.js";
import { upgradeFromNedb } from "../../lib/store/nedb-upgrade.js";
import { RATE_LIMIT_VARS } from "../../lib/ratelimit/project-limits.js";
import { createMemoryBucketStore } from "../../lib/ratelimit/memory.js";
import { openJobStore } from "./jobs/open.js";

const schema = {
  RPC_HOST: { type: "string", default: "127.0.0.1", description: "bind address of the RPC listener" },
  ARTICLES_PORT: { type: "integer", minimum: 0, maximum: 65535, default: 0, description: "RPC port (0 = any free port)" },
  AUTH_URL: { type: "string", format: "uri", description: "base URL of the auth service" },
  ...DATA_VARS,
  ...BUS_VARS,
  ...AUDIO_FILES_VARS,
  ...METRICS_VARS,
  ...SHUTDOWN_VARS,
  INTERNAL_TOKEN: { type: "string", description: "service-to-service bearer token" },
  ...PUBLIC_URL_VARS,
  FETCH_ALLOW_PRIVATE: { type: "string", description: "comma-separated host[:port] or address[:port] entries that recrawls and webhooks may reach although private; with a port, only that port" },
  RECONCILE_INTERVAL_MS: { type: "integer", minimum: 1000, default: 30_000, description: "reconciler period" },
  RECONCILE_STALE_MS: { type: "integer", minimum: 1000, default: 120_000, description: "age after which a pending article is re-queued" },
  ...ON_DEMAND_BUDGET_VARS,
  ...PAGE_FETCH_VARS,
  // The gateway's rate-limit settings: bulk jobs are paced through the same writes buckets (docs/limits.md).
  RATE_LIMIT_ENABLED: RATE_LIMIT_VARS.RATE_LIMIT_ENABLED,
  RATE_LIMIT_WRITES_PER_SECOND: RATE_LIMIT_VARS.RATE_LIMIT_WRITES_PER_SECOND,
  RATE_LIMIT_WRITES_BURST: RATE_LIMIT_VARS.RATE_LIMIT_WRITES_BURST,
  RATE_LIMIT_KV_BUCKET: RATE_LIMIT_VARS.RATE_LIMIT_KV_BUCKET,
  ...SOURCE_VARS,
  ON_DEMAND_KV_BUCKET: { type: "string", pattern: "^[A-Za-z0-9_-]+$", default: "ondemand", description: "NATS KV bucket the articles replicas share the on-demand budgets in" },
} as const;

const log = logger("articles");

async function main(): Promise<void> {
  const config = loadConfig(schema);
  if (!config.AUTH_URL) throw new ConfigError("Invalid configuration: AUTH_URL is required (base URL of the auth service)");
  if (!config.INTERNAL_TOKEN || !/^\S{16,}$/.test(config.INTERNAL_TOKEN)) {
    throw new ConfigError("Invalid configuration: INTERNAL_TOKEN is required: at least 16 characters without spaces, the same for every service");
  }

  if (!config.MONGODB_URL) await upgradeFromNedb(config.DATA_DIR, [ARTICLES_UPGRADE], { log });
  const store = await openArticleStore(config);
  log.info({ store: config.MONGODB_URL ? "mongodb" : "sqlite" }, "article store open");

  const bus = await openJobBus(config, log);
  // The same storage the audio workers write and the gateway reads: takedowns and clean-up happen here.
  const blobs = await openBlobStore(config);
  // With NATS every articles replica takes from the same budgets; idle ones expire after a day (a refilled bucket reads as full).
  const budgetStore = config.NATS_URL
    ? await (await import("../../lib/ratelimit/nats-kv.js")).createNatsKvBucketStore({ url: config.NATS_URL, bucket: config.ON_DEMAND_KV_BUCKET, idleTtlMs: 86_400_000 })
    : undefined;

  const jobs = await openJobStore(config);
  // With NATS the gateways' own buckets (shared through the KV bucket); without, this process's (still the project's rate).
  const writeBuckets = !config.RATE_LIMIT_ENABLED
    ? undefined
    : config.NATS_URL
      ? await (await import("../../lib/ratelimit/nats-kv.js")).createNatsKvBucketStore({ url: config.NATS_URL, bucket: config.RATE_LIMIT_KV_BUCKET })
      : createMemoryBucketStore();
  const sourceStore = await openSourceStore(config);
  const svc = await startArticlesService({
    store,
    bus,
    auth: rpcClient(AuthService, config.AUTH_URL),
    player: rpcClient(PlayerService, config.AUTH_URL, { token: config.INTERNAL_TOKEN }),
    stats: await openStatsStore(config),
    listening: config.NATS_URL ? await natsListeningChannel({ url: config.NATS_URL, log, ...listeningNames(config.NATS_STREAM) }) : undefined,
    settingsFrom: rpcClient(AuthService, config.AUTH_URL, { token: config.INTERNAL_TOKEN }),
    fetchOptions: privateAllowList(config.FETCH_ALLOW_PRIVATE),
    internalToken: config.INTERNAL_TOKEN,
    audioBaseUrl: audioBaseUrlOf(config),
    log,
    host: config.RPC_HOST,
    port: config.ARTICLES_PORT,
    reconcile: { intervalMs: config.RECONCILE_INTERVAL_MS, staleMs: config.RECONCILE_STALE_MS },
    blobs,
    supersededGraceMs: config.SUPERSEDED_AUDIO_GRACE_MS,
    onDemandBudget: { defaults: onDemandBudgetDefaults(config), store: budgetStore },
    pageFetches: pageQueueLimits(config),
    jobs,
    bulkPace: writeBuckets && { store: writeBuckets, shared: Boolean(config.NATS_URL), defaults: { perSecond: config.RATE_LIMIT_WRITES_PER_SECOND, burst: config.RATE_LIMIT_WRITES_BURST } },
    sources: { store: sourceStore, ...sourceOptionsOf(config) },
  });
  const metrics = await maybeStartMetricsServer(config, log);
  const statusSampler = sampleArticleStatuses(store, config.METRICS_SAMPLE_MS, log);

  onShutdown(log, async () => {
    svc.setServing(false);
    statusSampler?.stop();
    await svc.close();
    await bus.close();
    await blobs.close();
    await budgetStore?.close();
    await writeBuckets?.close();
    await jobs.close();
    await sourceStore.close();
    await store.close();
    closeRpcClients();
    await closeMongo();
    await metrics?.close();
  }, config.SHUTDOWN_GRACE_MS);
}

runMain(log, "articles service", main);
