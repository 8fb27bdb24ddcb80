// The audio worker of one process, as the benchmarks drive it: in-process bus, a stub articles
// service that hands out the article to render, a directory blob store, the provider router
// (no cloud credentials, so the local engine speaks) and the real job handler.
import path from "node:path";
import type { Client } from "@connectrpc/connect";
import type { ArticlesService } from "../gen/articles/v1/articles_pb.js";
import { createFsBlobStore } from "../lib/blob/fs.js";
import { createMemoryBus } from "../lib/bus/memory.js";
import { logger } from "../lib/log.js";
import { createLocalEngine } from "../services/audio/engine/index.js";
import { speechRouterFromEnv } from "../services/audio/providers/config.js";
import { startAudioWorker } from "../services/audio/worker.js";

export interface AudioPath {
  engineName: string;
  /** Publishes a job and resolves once full + preview are stored and the job is completed. */
  render(title: string, text: string): Promise<{ seconds: number; audioSeconds: number }>;
  close(): Promise<void>;
}

export async function startAudioPath(dir: string, threads: number | undefined, native: "never" | "always" | "auto"): Promise<AudioPath> {
  const engine = await createLocalEngine({ native, threads });
  // The cache is off: every run must synthesize everything.
  const speech = await speechRouterFromEnv({ DATA_DIR: dir, AUDIO_CACHE_MAX_BYTES: "0" }, { engine });
  const bus = createMemoryBus();
  const blobs = createFsBlobStore(path.join(dir, "audio"));
  const articles = new Map<string, { title: string; text: string }>();
  const done = new Map<string, { resolve: (r: { duration: number }) => void; reject: (e: Error) => void }>();
  const stub = {
    async claimAudioJob({ articleId }: { articleId: string }) {
      const a = articles.get(articleId)!;
      return { stale: false, article: { ...a, lang: "en-US", voice: "alloy", parse: false, isRaw: false, prompt: undefined } };
    },
    async reportAudioStatus() {
      return {};
    },
    async completeAudioJob(req: { articleId: string; audio?: { duration: number } }) {
      done.get(req.articleId)?.resolve({ duration: req.audio?.duration ?? 0 });
      return { applied: true };
    },
    async failAudioJob(req: { articleId: string; error: string }) {
      done.get(req.articleId)?.reject(new Error(`render failed: ${req.error}`));
      return {};
    },
  };
  const log = logger("bench-local-engine");
  const worker = await startAudioWorker({ bus, articles: stub as unknown as Client<typeof ArticlesService>, blobs, engine, speech, log });
  let n = 0;
  return {
    engineName: engine.name,
    async render(title: string, text: string): Promise<{ seconds: number; audioSeconds: number }> {
      const articleId = `bench${++n}`;
      articles.set(articleId, { title, text });
      const finished = new Promise<{ duration: number }>((resolve, reject) => done.set(articleId, { resolve, reject }));
      const started = performance.now();
      await bus.publish({ articleId, projectId: "bench", revision: 1 });
      const r = await finished;
      return { seconds: (performance.now() - started) / 1000, audioSeconds: r.duration };
    },
    async close() {
      await worker.stop();
      await bus.close();
      await engine.close();
    },
  };
}

