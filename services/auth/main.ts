// Process entry point of the auth service (one process per service).
import { ConfigError, loadConfig } from "../../lib/config.js";
import { logger } from "../../lib/log.js";
import { DATA_VARS } from "../../lib/adapters.js";
import { closeMongo } from "../../lib/mongo.js";
import { maybeStartMetricsServer, METRICS_VARS } from "../../lib/metrics.js";
import { onShutdown, runMain, SHUTDOWN_VARS } from "../../lib/service.js";
import { allowPrivateFrom } from "../../lib/net/allow-list.js";
import { startAuthService } from "./app.js";
import { OEMBED_VARS, oembedVerifierConfig } from "./oembed-hosts.js";
import { provisionTokens } from "./provision.js";
import { openAuthStore } from "./store/open.js";
import { NEDB_RELEASE, upgradeFromNedb } from "../../lib/store/nedb-upgrade.js";

const schema = {
  RPC_HOST: { type: "string", default: "127.0.0.1", description: "bind address of the RPC listener" },
  AUTH_PORT: { type: "integer", minimum: 0, maximum: 65535, default: 0, description: "RPC port (0 = any free port)" },
  ...DATA_VARS,
  PUBLIC_URL: { type: "string", format: "uri", default: "http://localhost:8080", description: "public gateway URL, shown in the demo banner" },
  SEED_TOKENS: { type: "string", format: "json", description: "JSON [{token, project, scope}] provisioned at start" },
  ADMIN_TOKEN: { type: "string", description: "credential for the admin RPCs; unset disables them" },
  ...METRICS_VARS,
  ...SHUTDOWN_VARS,
  INTERNAL_TOKEN: { type: "string", description: "service-to-service token (token checks, settings reads, reservations); unset disables those calls" },
  FETCH_ALLOW_PRIVATE: { type: "string", description: "comma-separated host[:port] or address[:port] entries a webhook URL or an oEmbed host may point at although private (same list as the articles service)" },
  ...OEMBED_VARS,
} as const;

const log = logger("auth");

async function main(): Promise<void> {
  const config = loadConfig(schema);
  if (config.ADMIN_TOKEN !== undefined && !/^\S{16,}$/.test(config.ADMIN_TOKEN)) {
    throw new ConfigError("Invalid configuration: ADMIN_TOKEN must be at least 16 characters without spaces (e.g. `openssl rand -base64 32`)");
  }

  if (!config.MONGODB_URL) await upgradeFromNedb(config.DATA_DIR, [NEDB_RELEASE.auth], { log });
  const store = await openAuthStore(config);
  log.info({ store: config.MONGODB_URL ? "mongodb" : "sqlite" }, "auth store open");

  await provisionTokens(store, config.SEED_TOKENS, process.stdout, config.PUBLIC_URL, log);
  if (!config.ADMIN_TOKEN) log.info("admin API disabled: set ADMIN_TOKEN to enable it");

  const privateTargets = { allowPrivate: allowPrivateFrom(config.FETCH_ALLOW_PRIVATE) };
  const svc = await startAuthService({
    store,
    adminToken: config.ADMIN_TOKEN,
    internalToken: config.INTERNAL_TOKEN,
    log,
    host: config.RPC_HOST,
    port: config.AUTH_PORT,
    webhookTargets: privateTargets,
    oembed: oembedVerifierConfig(config, privateTargets),
  });
  const metrics = await maybeStartMetricsServer(config, log);
  onShutdown(log, async () => {
    svc.setServing(false);
    await svc.close();
    await store.close();
    await closeMongo();
    await metrics?.close();
  }, config.SHUTDOWN_GRACE_MS);
}

runMain(log, "auth service", main);
