// Process entry point of the articles service (one process per service).
import { AuthService } from "../../gen/auth/v1/auth_pb.js";
import { createMemoryBus } from "../../lib/bus/memory.js";
import { createNatsBus } from "../../lib/bus/nats.js";
import type { JobBus } from "../../lib/bus/port.js";
import { ConfigError, loadConfig } from "../../lib/config.js";
import { logger } from "../../lib/log.js";
import { closeMongo, mongoDb } from "../../lib/mongo.js";
import { closeRpcClients, rpcClient } from "../../lib/rpc/client.js";
import { onShutdown } from "../../lib/service.js";
import { startArticlesService } from "./app.js";
import { openMongoArticleStore } from "./store/mongo.js";
import { openNedbArticleStore } from "./store/nedb.js";

const schema = {
  RPC_HOST: { type: "string", default: "127.0.0.1", description: "bind address of the RPC listener" },
  ARTICLES_PORT: { type: "integer", minimum: 0, maximum: 65535, default: 0, description: "RPC port (0 = any free port)" },
  AUTH_URL: { type: "string", format: "uri", description: "base URL of the auth service" },
  DATA_DIR: { type: "string", default: "./.data", description: "embedded store location" },
  MONGODB_URL: { type: "string", format: "uri", description: "MongoDB; selects the MongoDB store" },
  MONGODB_DB: { type: "string", default: "article_audio", description: "MongoDB database name" },
  INTERNAL_TOKEN: { type: "string", description: "service-to-service bearer token" },
  PORT: { type: "integer", minimum: 0, maximum: 65535, default: 8080, description: "public gateway port, for the default AUDIO_BASE_URL" },
  AUDIO_BASE_URL: { type: "string", format: "uri", description: "public base URL of audio files ({audio_url})" },
  NATS_URL: { type: "string", format: "uri", description: "NATS JetStream; selects the NATS bus" },
  RECONCILE_INTERVAL_MS: { type: "integer", minimum: 1000, default: 30_000, description: "reconciler period" },
  RECONCILE_STALE_MS: { type: "integer", minimum: 1000, default: 120_000, description: "age after which a pending article is re-queued" },
} as const;

const log = logger("articles");

async function main(): Promise<void> {
  const config = loadConfig(schema);
  if (!config.AUTH_URL) throw new ConfigError("Invalid configuration: AUTH_URL is required (base URL of the auth service)");
  if (!config.INTERNAL_TOKEN || !/^\S{16,}$/.test(config.INTERNAL_TOKEN)) {
    throw new ConfigError("Invalid configuration: INTERNAL_TOKEN is required: at least 16 characters without spaces, the same for every service");
  }

  const store = config.MONGODB_URL
    ? await openMongoArticleStore(await mongoDb(config.MONGODB_URL, config.MONGODB_DB))
    : await openNedbArticleStore({ dataDir: config.DATA_DIR });
  log.info({ store: config.MONGODB_URL ? "mongodb" : "nedb" }, "article store open");

  let bus: JobBus;
  if (config.NATS_URL) {
    bus = await createNatsBus({ url: config.NATS_URL, log });
  } else {
    // No worker in another process can reach an in-process queue.
    log.warn("NATS_URL is unset: jobs go to an in-process bus that only an audio worker in this process can consume");
    bus = createMemoryBus();
  }

  const svc = await startArticlesService({
    store,
    bus,
    auth: rpcClient(AuthService, config.AUTH_URL),
    internalToken: config.INTERNAL_TOKEN,
    audioBaseUrl: config.AUDIO_BASE_URL ?? `http://localhost:${config.PORT}/audio`,
    log,
    host: config.RPC_HOST,
    port: config.ARTICLES_PORT,
    reconcile: { intervalMs: config.RECONCILE_INTERVAL_MS, staleMs: config.RECONCILE_STALE_MS },
  });
  onShutdown(log, async () => {
    svc.setServing(false);
    await svc.close();
    await bus.close();
    await store.close();
    closeRpcClients();
    await closeMongo();
  });
}

main().catch((err: unknown) => {
  if (err instanceof ConfigError) log.fatal(err.message);
  else log.fatal({ err }, "articles service failed to start");
  process.exit(1);
});
