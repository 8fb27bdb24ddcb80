// The audio worker of one process, as the benchmarks drive it: in-process bus, a stub articles
// service that hands out the article to render, a directory blob store, the provider router
// (no cloud credentials, so the local engine speaks) and the real job handler.
import path from "node:path";
import { createClient, createRouterTransport } from "@connectrpc/connect";
import { ArticlesService } from "../gen/articles/v1/articles_pb.js";
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
  // The stub answers through a router transport, so the worker receives real ClaimAudioJobResponse
  // messages: fields added to the claim later arrive with their proto defaults (an empty
  // pronunciation list), and the handlers are type-checked against the service definition.
  const stub = createClient(ArticlesService, createRouterTransport((router) => router.service(ArticlesService, {
    claimAudioJob({ articleId }) {
      const a = articles.get(articleId)!;
      return { stale: false, article: { id: articleId, projectId: "bench", ...a, lang: "en-US", voice: "alloy", added: BigInt(Math.floor(Date.now() / 1000)), revision: 1n } };
    },
    reportAudioStatus: () => ({ applied: true }),
    completeAudioJob(req) {
      done.get(req.articleId)?.resolve({ duration: req.audio?.duration ?? 0 });
      return { applied: true };
    },
    failAudioJob(req) {
      done.get(req.articleId)?.reject(new Error(`render failed: ${req.error}`));
      return {};
    },
  })));
  const log = logger("bench-local-engine");
  const worker = await startAudioWorker({ bus, articles: stub, blobs, engine, speech, log });
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

