// Process entry point of the auth service (one process per service).
import { ConfigError, loadConfig } from "../../lib/config.js";
import { logger } from "../../lib/log.js";
import { closeMongo, mongoDb } from "../../lib/mongo.js";
import { onShutdown } from "../../lib/service.js";
import { startAuthService } from "./app.js";
import { applySeedTokens, demoBanner, ensureDemoProject } from "./seed.js";
import { openMongoAuthStore } from "./store/mongo.js";
import { openNedbAuthStore } from "./store/nedb.js";

const schema = {
  RPC_HOST: { type: "string", default: "127.0.0.1", description: "bind address of the RPC listener" },
  AUTH_PORT: { type: "integer", minimum: 0, maximum: 65535, default: 0, description: "RPC port (0 = any free port)" },
  DATA_DIR: { type: "string", default: "./.data", description: "embedded store location" },
  MONGODB_URL: { type: "string", format: "uri", description: "MongoDB; selects the MongoDB store" },
  MONGODB_DB: { type: "string", default: "article_audio", description: "MongoDB database name" },
  SEED_TOKENS: { type: "string", format: "json", description: "JSON [{token, project, scope}] provisioned at start" },
  ADMIN_TOKEN: { type: "string", description: "credential for the admin RPCs; unset disables them" },
} as const;

const log = logger("auth");

async function main(): Promise<void> {
  const config = loadConfig(schema);
  if (config.ADMIN_TOKEN !== undefined && !/^\S{16,}$/.test(config.ADMIN_TOKEN)) {
    throw new ConfigError("Invalid configuration: ADMIN_TOKEN must be at least 16 characters without spaces (e.g. `openssl rand -base64 32`)");
  }

  const store = config.MONGODB_URL
    ? await openMongoAuthStore(await mongoDb(config.MONGODB_URL, config.MONGODB_DB))
    : await openNedbAuthStore(config.DATA_DIR);
  log.info({ store: config.MONGODB_URL ? "mongodb" : "nedb" }, "auth store open");

  if (config.SEED_TOKENS !== undefined) {
    const r = await applySeedTokens(store, config.SEED_TOKENS);
    log.info({ projectsCreated: r.projectsCreated, tokensCreated: r.tokensCreated, unchanged: r.unchanged }, "SEED_TOKENS applied");
    for (const i of r.revoked) log.warn(`SEED_TOKENS[${i}] was revoked by an admin and stays revoked; seed a new token instead`);
  } else {
    const demo = await ensureDemoProject(store);
    // Plain tokens go to the terminal once, deliberately not through the logger.
    if (demo) process.stdout.write(demoBanner(demo));
  }
  if (!config.ADMIN_TOKEN) log.info("admin API disabled: set ADMIN_TOKEN to enable it");

  const svc = await startAuthService({ store, adminToken: config.ADMIN_TOKEN, log, host: config.RPC_HOST, port: config.AUTH_PORT });
  onShutdown(log, async () => {
    svc.setServing(false);
    await svc.close();
    await store.close();
    await closeMongo();
  });
}

main().catch((err: unknown) => {
  if (err instanceof ConfigError) log.fatal(err.message);
  else log.fatal({ err }, "auth service failed to start");
  process.exit(1);
});
