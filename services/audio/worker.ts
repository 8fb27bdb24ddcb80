// The audio job worker: takes jobs from the bus, claims them from the
// articles service, renders, stores the files and reports the outcome.
import type { Client } from "@connectrpc/connect";
import { ArticleStatus, ArticlesService } from "../../gen/articles/v1/articles_pb.js";
import type { BlobStore } from "../../lib/blob/port.js";
import type { Delivery, JobBus, JobSubscription } from "../../lib/bus/port.js";
import type { Logger } from "../../lib/log.js";
import { SpeechInputError, type SpeechEngine } from "./engine/index.js";
import { RenderInputError, renderArticle } from "./pipeline.js";

export interface AudioWorkerOptions {
  bus: JobBus;
  /** Must send the internal token: the audio-job calls refuse publisher tokens. */
  articles: Client<typeof ArticlesService>;
  blobs: BlobStore;
  engine: SpeechEngine;
  log: Logger;
  /** Articles rendered at once. */
  concurrency?: number;
  /** Chunks synthesized at once within one article. */
  chunkConcurrency?: number;
  maxAttempts?: number;
  ackWaitMs?: number;
  backoffMs?: number[];
  /** How often a running job extends its lease. */
  keepAliveMs?: number;
}

export interface AudioWorker {
  /** Stops taking jobs and waits for the ones being rendered. */
  stop(): Promise<void>;
}

const MAX_ERROR_CHARS = 500;

export function errorMessage(e: unknown): string {
  const msg = e instanceof Error ? e.message : String(e);
  return msg.length > MAX_ERROR_CHARS ? `${msg.slice(0, MAX_ERROR_CHARS)}…` : msg || "unknown error";
}

export const audioKeys = (articleId: string, revision: number | bigint) => ({
  full: `${articleId}/${revision}/full.mp3`,
  preview: `${articleId}/${revision}/preview.mp3`,
});

export async function startAudioWorker(opts: AudioWorkerOptions): Promise<AudioWorker> {
  const { articles, blobs, engine, log } = opts;
  const maxAttempts = opts.maxAttempts ?? 5;
  const keepAliveMs = opts.keepAliveMs ?? 5_000;

  async function handle(d: Delivery): Promise<void> {
    const { articleId } = d.job;
    const revision = BigInt(d.job.revision);
    const jlog = log.child({ articleId, revision: d.job.revision, attempt: d.attempt, requestId: d.job.requestId });
    const started = Date.now();

    const claim = await articles.claimAudioJob({ articleId, revision });
    if (claim.stale || !claim.article) {
      jlog.info("stale audio job dropped");
      return;
    }
    const a = claim.article;
    jlog.info({ chars: a.text.length, voice: a.voice, lang: a.lang }, "audio job claimed");

    const lease = setInterval(() => d.working(), keepAliveMs);
    lease.unref();
    try {
      const r = await renderArticle(
        { title: a.title, text: a.text, lang: a.lang, voice: a.voice, parse: a.parse, isRaw: a.isRaw },
        engine,
        { concurrency: opts.chunkConcurrency ?? 2 },
      );
      const renderedMs = Date.now() - started;
      jlog.info({ chunks: r.chunks, duration: r.fullDuration, previewDuration: r.previewDuration, ms: renderedMs }, "audio rendered");

      const keys = audioKeys(articleId, revision);
      await blobs.put(keys.full, r.full, "audio/mpeg");
      await blobs.put(keys.preview, r.preview, "audio/mpeg");
      const done = await articles.completeAudioJob({
        articleId,
        revision,
        audio: { key: keys.full, duration: r.fullDuration },
        audioPreview: { key: keys.preview, duration: r.previewDuration },
        provider: engine.name,
      });
      const ms = Date.now() - started;
      if (done.applied) jlog.info({ duration: r.fullDuration, ms }, "audio job completed");
      else jlog.info({ ms }, "audio result discarded: revision superseded or article deleted");
    } catch (e) {
      const message = errorMessage(e);
      if (e instanceof RenderInputError || e instanceof SpeechInputError) {
        // Retrying cannot fix the input: fail now instead of after every attempt.
        jlog.warn({ err: message }, "audio job failed permanently");
        await articles.failAudioJob({ articleId, revision, error: message });
        return;
      }
      jlog.warn({ err: message, ms: Date.now() - started }, "audio job attempt failed");
      if (d.attempt < maxAttempts) {
        try {
          await articles.reportAudioStatus({ articleId, revision, status: ArticleStatus.RETRY, error: message });
        } catch (re) {
          jlog.error({ err: errorMessage(re) }, "could not report retry status");
        }
      }
      throw e;
    } finally {
      clearInterval(lease);
    }
  }

  const sub: JobSubscription = await opts.bus.consume(handle, {
    concurrency: opts.concurrency ?? 1,
    maxAttempts,
    ackWaitMs: opts.ackWaitMs ?? 30_000,
    backoffMs: opts.backoffMs ?? [2_000, 10_000, 30_000, 60_000],
    async onExhausted(job, error, attempts) {
      const message = errorMessage(error);
      log.error({ articleId: job.articleId, revision: job.revision, attempts, err: message }, "audio job gave up");
      try {
        await articles.failAudioJob({ articleId: job.articleId, revision: BigInt(job.revision), error: message });
      } catch (e) {
        // The reconciler re-publishes articles left processing, so this is not lost.
        log.error({ articleId: job.articleId, err: errorMessage(e) }, "could not record the failure");
      }
    },
  });

  let stopped: Promise<void> | undefined;
  return {
    stop() {
      stopped ??= sub.drain();
      return stopped;
    },
  };
}
