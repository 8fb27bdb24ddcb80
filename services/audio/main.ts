// Process entry of the audio service (one process per service in the stack).
import { join } from "node:path";
import { ArticlesService } from "../../gen/articles/v1/articles_pb.js";
import { AuthService } from "../../gen/auth/v1/auth_pb.js";
import type { BlobStore } from "../../lib/blob/port.js";
import type { JobBus } from "../../lib/bus/port.js";
import { loadConfig } from "../../lib/config.js";
import { logger } from "../../lib/log.js";
import { closeMongo, mongoDb } from "../../lib/mongo.js";
import { closeRpcClients, rpcClient } from "../../lib/rpc/client.js";
import { onShutdown } from "../../lib/service.js";
import { startAudioService } from "./app.js";
import { createLocalEngine } from "./engine/index.js";

const schema = {
  RPC_HOST: { type: "string", default: "127.0.0.1", description: "bind address of the RPC listener" },
  AUDIO_PORT: { type: "integer", minimum: 0, maximum: 65535, default: 0, description: "RPC port (0 picks a free one)" },
  ARTICLES_URL: { type: "string", format: "uri", description: "base URL of the articles service" },
  AUTH_URL: { type: "string", format: "uri", description: "base URL of the auth service" },
  INTERNAL_TOKEN: { type: "string", pattern: "^\\S+$", description: "service-to-service bearer token" },
  DATA_DIR: { type: "string", default: "./.data", description: "audio files when MongoDB is not configured" },
  MONGODB_URL: { type: "string", format: "uri", description: "MongoDB: audio in GridFS" },
  MONGODB_DB: { type: "string", default: "article_audio", description: "MongoDB database" },
  NATS_URL: { type: "string", format: "uri", description: "NATS JetStream job bus" },
  AUDIO_CONCURRENCY: { type: "integer", minimum: 1, maximum: 64, default: 2, description: "articles rendered at once" },
  AUDIO_THREADS: { type: "integer", minimum: 1, maximum: 64, description: "synthesizer threads (default: by CPU count)" },
} as const;

const log = logger("audio");

async function main() {
  const cfg = loadConfig(schema);
  const missing = (["ARTICLES_URL", "AUTH_URL", "INTERNAL_TOKEN"] as const).filter((k) => !cfg[k]);
  if (missing.length) throw new Error(`Invalid configuration: ${missing.join(", ")} must be set`);

  let blobs: BlobStore;
  if (cfg.MONGODB_URL) {
    const { createGridFsBlobStore } = await import("../../lib/blob/gridfs.js");
    blobs = await createGridFsBlobStore(await mongoDb(cfg.MONGODB_URL, cfg.MONGODB_DB));
  } else {
    const { createFsBlobStore } = await import("../../lib/blob/fs.js");
    blobs = createFsBlobStore(join(cfg.DATA_DIR, "audio"));
  }
  let bus: JobBus;
  if (cfg.NATS_URL) {
    const { createNatsBus } = await import("../../lib/bus/nats.js");
    bus = await createNatsBus({ url: cfg.NATS_URL, log });
  } else {
    // Without NATS nothing else can publish to this process; kept so the service starts for RPC use.
    log.warn("NATS_URL is not set: using an in-process bus, no article jobs will arrive");
    const { createMemoryBus } = await import("../../lib/bus/memory.js");
    bus = createMemoryBus();
  }
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

main().catch((err) => {
  log.fatal({ err: err instanceof Error ? err.message : String(err) }, "audio service failed to start");
  process.exit(1);
});
