// Process entry point of the gateway: configuration from the environment,
// the blob store the configuration selects, graceful shutdown on SIGTERM.
import path from "node:path";
import { loadConfig } from "../lib/config.js";
import { logger } from "../lib/log.js";
import { closeMongo, mongoDb } from "../lib/mongo.js";
import { closeRpcClients } from "../lib/rpc/client.js";
import { onShutdown } from "../lib/service.js";
import type { BlobStore } from "../lib/blob/port.js";
import { startGateway } from "./app.js";
import type { HealthTarget } from "./routes/health.js";

const log = logger("gateway");

const config = loadConfig({
  PORT: { type: "integer", minimum: 0, maximum: 65535, default: 8080, description: "public HTTP port" },
  HOST: { type: "string", default: "0.0.0.0", description: "public bind address" },
  ARTICLES_URL: { type: "string", format: "uri", description: "base URL of the articles service" },
  AUTH_URL: { type: "string", format: "uri", description: "base URL of the auth service (health only)" },
  AUDIO_URL: { type: "string", format: "uri", description: "base URL of the audio service (health only)" },
  MAX_BODY_BYTES: { type: "integer", minimum: 1, default: 10 * 1024 * 1024, description: "larger request bodies get 413" },
  DATA_DIR: { type: "string", default: "./.data", description: "embedded data directory (audio files)" },
  MONGODB_URL: { type: "string", format: "uri", description: "MongoDB: audio files from GridFS" },
  MONGODB_DB: { type: "string", default: "article_audio", description: "MongoDB database name" },
});

async function main(): Promise<void> {
  if (!config.ARTICLES_URL) throw new Error("Invalid configuration: ARTICLES_URL is required");
  const healthTargets: HealthTarget[] = [
    { name: "auth", url: config.AUTH_URL },
    { name: "articles", url: config.ARTICLES_URL },
    { name: "audio", url: config.AUDIO_URL },
  ].filter((t): t is HealthTarget => Boolean(t.url));

  // Same location as the audio service writes to; adapters load only when selected.
  let blobs: BlobStore;
  if (config.MONGODB_URL) {
    const { createGridFsBlobStore } = await import("../lib/blob/gridfs.js");
    blobs = await createGridFsBlobStore(await mongoDb(config.MONGODB_URL, config.MONGODB_DB));
  } else {
    const { createFsBlobStore } = await import("../lib/blob/fs.js");
    blobs = createFsBlobStore(path.join(config.DATA_DIR, "audio"));
  }

  const gateway = await startGateway({
    articlesUrl: config.ARTICLES_URL,
    healthTargets,
    blobs,
    log,
    host: config.HOST,
    port: config.PORT,
    maxBodyBytes: config.MAX_BODY_BYTES,
  });

  onShutdown(log, async () => {
    gateway.setServing(false);
    await gateway.close();
    await blobs.close();
    closeRpcClients();
    if (config.MONGODB_URL) await closeMongo();
  });
}

main().catch((err: unknown) => {
  log.fatal({ err }, "gateway failed to start");
  process.exit(1);
});
