// The audio job worker: takes jobs from the bus, claims them from the
// articles service, renders, stores the files and reports the outcome.
import type { Client } from "@connectrpc/connect";
import { ArticleStatus, ArticlesService } from "../../gen/articles/v1/articles_pb.js";
import type { BlobStore } from "../../lib/blob/port.js";
import { HandBackError, type Delivery, type JobBus, type JobSubscription } from "../../lib/bus/port.js";
import type { Logger } from "../../lib/log.js";
import { instrumentProviders, instrumentSynthesis, jobDuration, jobsInFlight } from "../../lib/metrics.js";
import { forwardRequestId, requestIdFields } from "../../lib/rpc/request-id.js";
import { SpeechInputError, type SpeechEngine } from "./engine/index.js";
import { DEFAULT_LOUDNESS, preloadLoudness, projectTarget } from "./loudness/index.js";
import { RenderInputError, renderArticle, renderWithProviders } from "./pipeline.js";
import { ruleFromProto } from "../../lib/rpc/pronunciations.js";
import { ChainExhaustedError, type SpeechRouter } from "./providers/router.js";
import type { TextWork } from "./text/work.js";
import { audioKeys } from "../../lib/revision-files.js";
import { storeTranscript } from "./transcript-files.js";
import { liveWriter } from "./live-store.js";

export interface AudioWorkerOptions {
  bus: JobBus;
  /** Must send the internal token: the audio-job calls refuse publisher tokens. */
  articles: Client<typeof ArticlesService>;
  blobs: BlobStore;
  engine: SpeechEngine;
  /**
   * Provider routing (cloud voices, retries, fallback chain, chunk cache). Without it the
   * engine renders directly and failures are retried by the bus.
   */
  speech?: SpeechRouter;
  /** Where each article's text work runs (a thread pool with a deadline, text/work.ts); default: this thread. */
  text?: TextWork;
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
  /**
   * How often a running job tells the articles service it is still in hand, so its reconciler
   * (stale after 120 s by default) does not queue the revision again beside a long render; default 20 s.
   */
  keepDueMs?: number;
  /** How long stop() lets renders run on before aborting them and handing their jobs back; default 20 s. */
  drainTimeoutMs?: number;
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

// The key layout is shared with the articles service, which links to these files.
export { audioKeys };

export async function startAudioWorker(opts: AudioWorkerOptions): Promise<AudioWorker> {
  const { articles, blobs, log } = opts;
  const engine = instrumentSynthesis(opts.engine);
  const speech = opts.speech && instrumentProviders(opts.speech);
  // Aborted by stop() once the drain time is up, so a long render cannot outlive the grace period.
  const shutdown = new AbortController();
  const maxAttempts = opts.maxAttempts ?? 5;
  const keepAliveMs = opts.keepAliveMs ?? 5_000;
  const keepDueMs = opts.keepDueMs ?? 20_000;
  // Cloud audio is measured as it arrives; the meter and decoder load now, not with the first chunk.
  if (speech) void preloadLoudness().catch((e) => log.warn({ err: errorMessage(e) }, "loudness meter did not load"));

  async function handle(d: Delivery): Promise<void> {
    const { articleId } = d.job;
    const revision = BigInt(d.job.revision);
    const jlog = log.child({ articleId, revision: d.job.revision, attempt: d.attempt, ...requestIdFields(d.job.requestId) });
    // The worker's calls are made on behalf of the publisher's request: articles logs them under its id.
    const call = forwardRequestId(d.job.requestId);
    const started = Date.now();

    const claim = await articles.claimAudioJob({ articleId, revision }, call);
    if (claim.stale || !claim.article) {
      jlog.info("stale audio job dropped");
      return;
    }
    const a = claim.article;
    jlog.info({ chars: a.text.length, voice: a.voice, lang: a.lang }, "audio job claimed");

    let keptDueAt = Date.now();
    const lease = setInterval(() => {
      d.working();
      if (Date.now() - keptDueAt < keepDueMs) return;
      keptDueAt = Date.now();
      articles.reportAudioStatus({ articleId, revision, keepAlive: true }, call).catch((e) => jlog.warn({ err: errorMessage(e) }, "could not tell the articles service the job is in hand"));
    }, Math.min(keepAliveMs, keepDueMs));
    // Aborts the render once its preview is stored and its full stage queued (see onPreview).
    const handOn = new AbortController();
    let handedOn = false;
    lease.unref();
    const report = async (status: ArticleStatus, error: string) => {
      try {
        await articles.reportAudioStatus({ articleId, revision, status, error }, call);
      } catch (re) {
        jlog.error({ err: errorMessage(re) }, "could not report audio status");
      }
    };
    try {
      const pronunciations = claim.pronunciations.map(ruleFromProto);
      const content = { title: a.title, text: a.text, lang: a.lang, voice: a.voice, parse: a.parse, isRaw: a.isRaw, pronunciations };
      // Full file and preview, whichever provider or engine speaks them.
      const loudness = projectTarget(speech?.loudness ?? DEFAULT_LOUDNESS, claim.loudness);
      // ID3 tags on both files. The articles service knows the project by id only (its name
      // would need a call to auth); added/updated are Unix seconds.
      const tags = { title: a.title, artist: a.projectId, album: a.projectId, lang: a.lang, date: new Date(Number(a.updated ?? a.added) * 1000), articleId };
      const text = opts.text && { work: opts.text, project: a.projectId };
      const keys = audioKeys(articleId, revision);
      // Someone waits for this one (audio on demand): the preview is stored and reported as soon
      // as its chunks are rendered, so a player can start it. The rest is not made now but handed
      // to the lane as the job's full stage, behind every preview waiting there (the preview lane):
      // five listeners pressing play at once each wait for four previews, not four whole articles.
      // Its opening chunks come from the chunk cache then.
      let previewStored: { key: string; duration: number } | undefined;
      // The full stage's preview is the one stored by the first stage (the same cut of the same chunks).
      if (d.job.stage === "full") previewStored = a.audioPreview?.key ? { key: a.audioPreview.key, duration: a.audioPreview.duration } : undefined;
      const onPreview = d.job.priority && d.job.stage !== "full"
        ? async (p: { mp3: Buffer; duration: number }) => {
            try {
              await blobs.put(keys.preview, p.mp3, "audio/mpeg");
              await articles.reportAudioStatus({ articleId, revision, status: ArticleStatus.PROCESSING, audioPreview: { key: keys.preview, duration: p.duration } }, call);
              previewStored = { key: keys.preview, duration: p.duration };
              jlog.info({ previewDuration: p.duration, ms: Date.now() - started }, "audio preview ready");
            } catch (e) {
              jlog.warn({ err: errorMessage(e) }, "early preview not stored; it comes with the full audio");
              return;
            }
            try {
              await opts.bus.publish({ ...d.job, stage: "full" });
              handedOn = true;
              handOn.abort(new Error("preview stored; the full render follows in the lane"));
            } catch (e) {
              jlog.warn({ err: errorMessage(e) }, "full stage not queued; rendered now");
            }
          }
        : undefined;
      // A listener may be playing it while it is made: its parts go to the store as they come.
      const live = d.job.priority ? liveWriter(blobs, keys, jlog, started) : undefined;
      const r = speech
        ? await renderWithProviders({ ...content, prompt: a.prompt }, speech, {
            signal: AbortSignal.any([shutdown.signal, handOn.signal]),
            tags,
            loudness,
            text,
            onPreview,
            onLive: live?.onLive,
            // A fallback provider's own retries keep the article in `fallback`.
            onRetry: (error, fallback) => report(fallback ? ArticleStatus.FALLBACK : ArticleStatus.RETRY, errorMessage(error)),
            onFallback: (error, provider) => {
              jlog.warn({ err: error, provider }, "falling back to another speech provider");
              return report(ArticleStatus.FALLBACK, errorMessage(error));
            },
          })
        : { ...(await renderArticle(content, engine, { concurrency: opts.chunkConcurrency ?? 2, signal: shutdown.signal, tags, loudness, text })), provider: engine.name };
      const renderedMs = Date.now() - started;
      jlog.info({ chunks: r.chunks, duration: r.fullDuration, previewDuration: r.previewDuration, lufs: loudness.lufs, truePeak: loudness.truePeak, ms: renderedMs }, "audio rendered");

      await live?.flushed();
      await blobs.put(keys.full, r.full, "audio/mpeg");
      // The early preview is the same file: not written again under a listener who may be playing it.
      if (!previewStored) await blobs.put(keys.preview, r.preview, "audio/mpeg");
      // Before the revision is marked ready, so whoever sees it ready finds its transcript too.
      const transcript = await storeTranscript(blobs, keys, r.segments, text);
      const done = await articles.completeAudioJob({
        articleId,
        revision,
        audio: { key: keys.full, duration: r.fullDuration },
        audioPreview: previewStored ?? { key: keys.preview, duration: r.previewDuration },
        provider: r.provider,
        transcript,
      }, call);
      live?.expire();
      const ms = Date.now() - started;
      if (done.applied) jlog.info({ duration: r.fullDuration, ms }, "audio job completed");
      else jlog.info({ ms }, "audio result discarded: revision superseded or article deleted");
    } catch (e) {
      if (handedOn) {
        jlog.info({ ms: Date.now() - started }, "preview made; full render queued behind the waiting previews");
        return;
      }
      if (shutdown.signal.aborted) {
        // Not a failure of the job: the bus hands it to another worker without counting this attempt.
        jlog.warn({ ms: Date.now() - started }, "render aborted by shutdown; job handed back");
        throw new HandBackError(`audio worker shutting down: ${errorMessage(e)}`);
      }
      const message = errorMessage(e);
      if (e instanceof RenderInputError || e instanceof SpeechInputError || e instanceof ChainExhaustedError) {
        // Retrying cannot fix the input, and an exhausted chain has used up its own bounded
        // retries: fail now instead of after every bus attempt.
        jlog.warn({ err: message }, "audio job failed permanently");
        await articles.failAudioJob({ articleId, revision, error: message }, call);
        return;
      }
      jlog.warn({ err: message, ms: Date.now() - started }, "audio job attempt failed");
      if (d.attempt < maxAttempts) {
        try {
          await articles.reportAudioStatus({ articleId, revision, status: ArticleStatus.RETRY, error: message }, call);
        } catch (re) {
          jlog.error({ err: errorMessage(re) }, "could not report retry status");
        }
      }
      throw e;
    } finally {
      clearInterval(lease);
    }
  }

  async function measured(d: Delivery): Promise<void> {
    jobsInFlight.inc();
    const end = jobDuration.startTimer();
    try {
      await handle(d);
      end({ outcome: "done" });
    } catch (e) {
      end({ outcome: shutdown.signal.aborted ? "handed_back" : "retry" });
      throw e;
    } finally {
      jobsInFlight.dec();
    }
  }

  const sub: JobSubscription = await opts.bus.consume(measured, {
    concurrency: opts.concurrency ?? 1,
    maxAttempts,
    ackWaitMs: opts.ackWaitMs ?? 30_000,
    backoffMs: opts.backoffMs ?? [2_000, 10_000, 30_000, 60_000],
    async onExhausted(job, error, attempts) {
      const message = errorMessage(error);
      log.error({ articleId: job.articleId, revision: job.revision, attempts, err: message, ...requestIdFields(job.requestId) }, "audio job gave up");
      try {
        await articles.failAudioJob({ articleId: job.articleId, revision: BigInt(job.revision), error: message }, forwardRequestId(job.requestId));
      } catch (e) {
        // The reconciler re-publishes articles left processing, so this is not lost.
        log.error({ articleId: job.articleId, err: errorMessage(e) }, "could not record the failure");
      }
    },
  });

  let stopped: Promise<void> | undefined;
  return {
    stop() {
      stopped ??= (async () => {
        const abort = setTimeout(() => shutdown.abort(new Error("audio worker shutting down")), opts.drainTimeoutMs ?? 20_000);
        try {
          await sub.drain();
        } finally {
          clearTimeout(abort);
        }
      })();
      return stopped;
    },
  };
}
