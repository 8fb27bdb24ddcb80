// Process entry of the audio service (one process per service in the stack).
import { ArticlesService } from "../../gen/articles/v1/articles_pb.js";
import { AuthService } from "../../gen/auth/v1/auth_pb.js";
import { BUS_VARS, DATA_VARS, openBlobStore, openJobBus } from "../../lib/adapters.js";
import { ConfigError, loadConfig } from "../../lib/config.js";
import { logger } from "../../lib/log.js";
import { closeMongo } from "../../lib/mongo.js";
import { closeRpcClients, rpcClient } from "../../lib/rpc/client.js";
import { maybeStartMetricsServer, METRICS_VARS, sampleQueue } from "../../lib/metrics.js";
import { onShutdown, runMain, SHUTDOWN_VARS } from "../../lib/service.js";
import { startAudioService } from "./app.js";
import { AUDIO_DRAIN_VARS, audioDrainMsOf } from "./drain.js";
import { createLocalEngine } from "./engine/index.js";
import { speechRouterFromEnv } from "./providers/config.js";
import { TEXT_VARS } from "./text/work.js";

const schema = {
  RPC_HOST: { type: "string", default: "127.0.0.1", description: "bind address of the RPC listener" },
  AUDIO_PORT: { type: "integer", minimum: 0, maximum: 65535, default: 0, description: "RPC port (0 picks a free one)" },
  ARTICLES_URL: { type: "string", format: "uri", description: "base URL of the articles service" },
  AUTH_URL: { type: "string", format: "uri", description: "base URL of the auth service" },
  INTERNAL_TOKEN: { type: "string", pattern: "^\\S+$", description: "service-to-service bearer token" },
  ...DATA_VARS,
  ...BUS_VARS,
  ...METRICS_VARS,
  ...SHUTDOWN_VARS,
  AUDIO_CONCURRENCY: { type: "integer", minimum: 1, maximum: 64, default: 2, description: "articles rendered at once" },
  AUDIO_THREADS: { type: "integer", minimum: 1, maximum: 64, description: "synthesizer threads (default: by CPU count)" },
  AUDIO_ACK_WAIT_MS: { type: "integer", minimum: 1000, description: "job lease: a job whose worker died is redelivered after this (default 30 s)" },
  ...AUDIO_DRAIN_VARS,
  ADHOC_AUDIO_TTL_HOURS: { type: "number", minimum: 0.1, maximum: 8760, default: 24, description: "ad-hoc (Synthesize) audio is deleted after this many hours" },
  ...TEXT_VARS,
} as const;

const log = logger("audio");

async function main() {
  const cfg = loadConfig(schema);
  const missing = (["ARTICLES_URL", "AUTH_URL", "INTERNAL_TOKEN"] as const).filter((k) => !cfg[k]);
  if (missing.length) throw new ConfigError(`Invalid configuration: ${missing.join(", ")} must be set`);
  const drainTimeoutMs = audioDrainMsOf(cfg);

  const blobs = await openBlobStore(cfg);
  const bus = await openJobBus(cfg, log);
  const engine = await createLocalEngine({ threads: cfg.AUDIO_THREADS });

  // Provider variables (docs/providers.md) are validated here, before anything listens.
  const speech = await speechRouterFromEnv(process.env, { engine, log });
  const svc = await startAudioService({
    bus,
    blobs,
    engine,
    speech,
    log,
    articles: rpcClient(ArticlesService, cfg.ARTICLES_URL!, { token: cfg.INTERNAL_TOKEN }),
    auth: rpcClient(AuthService, cfg.AUTH_URL!),
    internalToken: cfg.INTERNAL_TOKEN!,
    host: cfg.RPC_HOST,
    port: cfg.AUDIO_PORT,
    concurrency: cfg.AUDIO_CONCURRENCY,
    adhocTtlMs: cfg.ADHOC_AUDIO_TTL_HOURS * 3_600_000,
    textTimeoutMs: cfg.AUDIO_TEXT_TIMEOUT_MS,
    worker: {
      // What is still rendering when this runs out is aborted and handed back, within the grace period.
      drainTimeoutMs,
      // A running job must renew its lease well within the lease.
      ...(cfg.AUDIO_ACK_WAIT_MS ? { ackWaitMs: cfg.AUDIO_ACK_WAIT_MS, keepAliveMs: Math.min(5_000, Math.floor(cfg.AUDIO_ACK_WAIT_MS / 4)) } : {}),
    },
  });

  const metrics = await maybeStartMetricsServer(cfg, log);
  const queueSampler = sampleQueue(bus, cfg.METRICS_SAMPLE_MS, log);

  onShutdown(log, async (step) => {
    queueSampler?.stop();
    step("jobs in hand");
    await svc.close();
    // Closed together; the log of a shutdown that ran out of time names those still open.
    let open = ["speech engine", "job bus", "blob store"];
    const closing = (name: string, closed: Promise<void>) =>
      closed.finally(() => {
        open = open.filter((n) => n !== name);
        step(open.join(", "));
      });
    step(open.join(", "));
    await Promise.allSettled([closing("speech engine", engine.close()), closing("job bus", bus.close()), closing("blob store", blobs.close())]);
    closeRpcClients();
    step("database");
    await closeMongo();
    step("metrics listener");
    await metrics?.close();
  }, cfg.SHUTDOWN_GRACE_MS);
}

runMain(log, "audio service", main);
