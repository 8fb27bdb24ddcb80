// Picks the adapters the configuration asks for: MongoDB/GridFS when
// MONGODB_URL is set, NATS JetStream when NATS_URL is set, otherwise the
// embedded ones. Adapters load lazily so the embedded default never touches
// the network drivers.
import path from "node:path";
import type { BlobStore } from "./blob/port.js";
import type { JobBus } from "./bus/port.js";
import type { Logger } from "./log.js";
import { mongoDb } from "./mongo.js";

export interface DataConfig {
  DATA_DIR: string;
  MONGODB_URL?: string;
  MONGODB_DB: string;
}

/** Common variables, so every process names and validates them the same way. */
export const DATA_VARS = {
  DATA_DIR: { type: "string", default: "./.data", description: "embedded data directory (stores and audio files)" },
  MONGODB_URL: { type: "string", format: "uri", description: "MongoDB; selects the MongoDB stores and GridFS audio" },
  MONGODB_DB: { type: "string", default: "article_audio", description: "MongoDB database name" },
} as const;

export const BUS_VARS = {
  NATS_URL: { type: "string", format: "uri", description: "NATS JetStream; selects the NATS job bus" },
  // Separate names let several stacks (e.g. test runs) share one NATS server.
  NATS_STREAM: { type: "string", pattern: "^[A-Za-z0-9_-]+$", description: "JetStream stream of audio jobs (default AUDIO_JOBS)" },
  NATS_SUBJECT: { type: "string", pattern: "^[A-Za-z0-9_.-]+$", description: "subject prefix of audio jobs: project p publishes to <subject>.<p> (default audio.jobs)" },
  NATS_DURABLE: { type: "string", pattern: "^[A-Za-z0-9_-]+$", description: "name prefix of the per-project durable consumers the audio workers share, <durable>_<project> (default audio-workers)" },
} as const;

export async function openBlobStore(cfg: DataConfig): Promise<BlobStore> {
  if (cfg.MONGODB_URL) {
    const { createGridFsBlobStore } = await import("./blob/gridfs.js");
    return createGridFsBlobStore(await mongoDb(cfg.MONGODB_URL, cfg.MONGODB_DB));
  }
  const { createFsBlobStore } = await import("./blob/fs.js");
  return createFsBlobStore(path.join(cfg.DATA_DIR, "audio"));
}

/** `shared` is the in-process bus of the embedded launcher, used when NATS is not configured. */
export async function openJobBus(
  cfg: { NATS_URL?: string; NATS_STREAM?: string; NATS_SUBJECT?: string; NATS_DURABLE?: string },
  log: Logger,
  shared?: JobBus,
): Promise<JobBus> {
  if (cfg.NATS_URL) {
    const { createNatsBus } = await import("./bus/nats.js");
    return createNatsBus({ url: cfg.NATS_URL, log, stream: cfg.NATS_STREAM, subject: cfg.NATS_SUBJECT, durable: cfg.NATS_DURABLE });
  }
  if (shared) return shared;
  log.warn("NATS_URL is unset: jobs use an in-process bus, which only reaches an audio worker in this same process");
  const { createMemoryBus } = await import("./bus/memory.js");
  return createMemoryBus();
}
