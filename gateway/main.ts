// Process entry point of the gateway: configuration from the environment,
// the blob store the configuration selects, graceful shutdown on SIGTERM.
import { PLAYER_VARS, playerEventLimits } from "./routes/player.js";
import { LIVE_AUDIO_VARS, liveAudioOptionsOf } from "./routes/live-audio.js";
import { ConfigError, loadConfig } from "../lib/config.js";
import { logger } from "../lib/log.js";
import { DATA_VARS, openBlobStore } from "../lib/adapters.js";
import { closeMongo } from "../lib/mongo.js";
import { closeRpcClients } from "../lib/rpc/client.js";
import { maybeStartMetricsServer, METRICS_VARS } from "../lib/metrics.js";
import { PUBLIC_URL_VARS, publicBaseUrlOf, warnWithoutPublicBaseUrl } from "../lib/public-url.js";
import { onShutdown, runMain, SHUTDOWN_VARS } from "../lib/service.js";
import { gatewayDrainMsOf, startGateway } from "./app.js";
import { TRUST_PROXY_VARS } from "./public-links.js";
import { gatewayRateLimit, RATE_LIMIT_VARS } from "./ratelimit-setup.js";
import { IMPORT_VARS, importLimitsOf } from "./import-limits.js";
import type { HealthTarget } from "./routes/health.js";

const log = logger("gateway");

const schema = {
  PORT: { type: "integer", minimum: 0, maximum: 65535, default: 8080, description: "public HTTP port" },
  HOST: { type: "string", default: "0.0.0.0", description: "public bind address" },
  ARTICLES_URL: { type: "string", format: "uri", description: "base URL of the articles service" },
  AUTH_URL: { type: "string", format: "uri", description: "base URL of the auth service (health, token checks before a write's body is read, GET /api/token, the project lookup of rate limits, player keys and feeds)" },
  INTERNAL_TOKEN: { type: "string", pattern: "^\\S{16,}$", description: "service-to-service token the gateway presents to the auth service (write checks, rate limits)" },
  PUBLIC_BASE_URL: PUBLIC_URL_VARS.PUBLIC_BASE_URL,
  ...TRUST_PROXY_VARS,
  NATS_URL: { type: "string", format: "uri", description: "NATS JetStream: rate-limit buckets shared by every gateway replica (KV); unset = per-process buckets" },
  ...RATE_LIMIT_VARS,
  ...IMPORT_VARS,
  ...PLAYER_VARS,
  ...LIVE_AUDIO_VARS,
  AUDIO_URL: { type: "string", format: "uri", description: "base URL of the audio service (health, and the pronunciation preview's synthesis)" },
  MAX_BODY_BYTES: { type: "integer", minimum: 1, default: 10 * 1024 * 1024, description: "larger request bodies get 413" },
  ...DATA_VARS,
  ...METRICS_VARS,
  METRICS_ON_PUBLIC_PORT: { type: "boolean", default: false, description: "also serve /metrics on PORT (off: only the METRICS_PORT listener serves it)" },
  ...SHUTDOWN_VARS,
} as const;

async function main(): Promise<void> {
  const config = loadConfig(schema);
  if (!config.ARTICLES_URL) throw new ConfigError("Invalid configuration: ARTICLES_URL is required");
  warnWithoutPublicBaseUrl(config, process.env, log);
  const healthTargets: HealthTarget[] = [
    { name: "auth", url: config.AUTH_URL },
    { name: "articles", url: config.ARTICLES_URL },
    { name: "audio", url: config.AUDIO_URL },
  ].filter((t): t is HealthTarget => Boolean(t.url));

  // Same location as the audio service writes to.
  const blobs = await openBlobStore(config);

  const rateLimit = await gatewayRateLimit(config, { url: config.AUTH_URL, internalToken: config.INTERNAL_TOKEN }, log);
  const gateway = await startGateway({
    rateLimit: rateLimit?.options,
    imports: importLimitsOf(config),
    playerEventRate: playerEventLimits(config),
    liveAudio: liveAudioOptionsOf(config),
    articlesUrl: config.ARTICLES_URL,
    audioUrl: config.AUDIO_URL,
    publicBaseUrl: publicBaseUrlOf(config),
    trustProxy: config.TRUST_PROXY,
    healthTargets,
    blobs,
    log,
    host: config.HOST,
    port: config.PORT,
    maxBodyBytes: config.MAX_BODY_BYTES,
    authUrl: config.AUTH_URL,
    internalToken: config.INTERNAL_TOKEN,
    metricsOnPublicPort: config.METRICS_ON_PUBLIC_PORT,
    drainMs: gatewayDrainMsOf(config.SHUTDOWN_GRACE_MS),
  });
  // Scrapers use this listener; PORT serves /metrics only with METRICS_ON_PUBLIC_PORT=true.
  const metrics = await maybeStartMetricsServer(config, log);

  onShutdown(log, async () => {
    gateway.setServing(false);
    await gateway.close();
    await rateLimit?.close();
    await blobs.close();
    closeRpcClients();
    if (config.MONGODB_URL) await closeMongo();
    await metrics?.close();
  }, config.SHUTDOWN_GRACE_MS);
}

runMain(log, "gateway", main);
