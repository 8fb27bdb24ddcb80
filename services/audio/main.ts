// Process entry of the audio service (one process per service in the stack).
import { ArticlesService } from "../../gen/articles/v1/articles_pb.js";
import { AuthService } from "../../gen/auth/v1/auth_pb.js";
import { BUS_VARS, DATA_VARS, openBlobStore, openJobBus } from "../../lib/adapters.js";
import { ConfigError, loadConfig } from "../../lib/config.js";
import { logger } from "../../lib/log.js";
import { closeMongo } from "../../lib/mongo.js";
import { closeRpcClients, rpcClient } from "../../lib/rpc/client.js";
import { onShutdown, runMain } from "../../lib/service.js";
import { startAudioService } from "./app.js";
import { createLocalEngine } from "./engine/index.js";

const schema = {
  RPC_HOST: { type: "string", default: "127.0.0.1", description: "bind address of the RPC listener" },
  AUDIO_PORT: { type: "integer", minimum: 0, maximum: 65535, default: 0, description: "RPC port (0 picks a free one)" },
  ARTICLES_URL: { type: "string", format: "uri", description: "base URL of the articles service" },
  AUTH_URL: { type: "string", format: "uri", description: "base URL of the auth service" },
  INTERNAL_TOKEN: { type: "string", pattern: "^\\S+$", description: "service-to-service bearer token" },
  ...DATA_VARS,
  ...BUS_VARS,
  AUDIO_CONCURRENCY: { type: "integer", minimum: 1, maximum: 64, default: 2, description: "articles rendered at once" },
  AUDIO_THREADS: { type: "integer", minimum: 1, maximum: 64, description: "synthesizer threads (default: by CPU count)" },
} as const;

const log = logger("audio");

async function main() {
  const cfg = loadConfig(schema);
  const missing = (["ARTICLES_URL", "AUTH_URL", "INTERNAL_TOKEN"] as const).filter((k) => !cfg[k]);
  if (missing.length) throw new ConfigError(`Invalid configuration: ${missing.join(", ")} must be set`);

  const blobs = await openBlobStore(cfg);
  const bus = await openJobBus(cfg, log);
  const engine = await createLocalEngine({ threads: cfg.AUDIO_THREADS });

  const svc = await startAudioService({
    bus,
    blobs,
    engine,
    log,
    articles: rpcClient(ArticlesService, cfg.ARTICLES_URL!, { token: cfg.INTERNAL_TOKEN }),
    auth: rpcClient(AuthService, cfg.AUTH_URL!),
    internalToken: cfg.INTERNAL_TOKEN!,
    host: cfg.RPC_HOST,
    port: cfg.AUDIO_PORT,
    concurrency: cfg.AUDIO_CONCURRENCY,
  });

  onShutdown(log, async () => {
    await svc.close();
    await Promise.allSettled([engine.close(), bus.close(), blobs.close()]);
    closeRpcClients();
    await closeMongo();
  });
}

runMain(log, "audio service", main);
