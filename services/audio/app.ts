// Starts the audio service: its RPC server and the job worker.
import type { Client } from "@connectrpc/connect";
import type { ArticlesService } from "../../gen/articles/v1/articles_pb.js";
import { AudioService } from "../../gen/audio/v1/audio_pb.js";
import { ReservationOutcome, type AuthService } from "../../gen/auth/v1/auth_pb.js";
import type { BlobStore } from "../../lib/blob/port.js";
import type { JobBus } from "../../lib/bus/port.js";
import type { Logger } from "../../lib/log.js";
import { createCallerResolver } from "../../lib/rpc/caller.js";
import { startRpcServer } from "../../lib/rpc/server.js";
import type { RunningService } from "../../lib/service.js";
import type { ProjectSettings } from "../../lib/project-settings.js";
import type { SpeechEngine } from "./engine/index.js";
import { DEFAULT_LOUDNESS, projectTarget, type LoudnessTarget } from "./loudness/index.js";
import { speechRouterFromEnv } from "./providers/config.js";
import type { SpeechRouter } from "./providers/router.js";
import { startAdhocSweeper } from "./adhoc.js";
import { voiceCatalog } from "./engine/catalog.js";
import { audioServiceImpl, type SynthesisQuota } from "./service.js";
import { sampleRenderer } from "./voice-status.js";
import { createTextPool, type TextWork } from "./text/work.js";
import { errorMessage, startAudioWorker, type AudioWorkerOptions } from "./worker.js";

export interface AudioServiceOptions {
  bus: JobBus;
  blobs: BlobStore;
  /** Must send the internal token. */
  articles: Client<typeof ArticlesService>;
  auth: Client<typeof AuthService>;
  internalToken: string;
  engine: SpeechEngine;
  /**
   * Cloud providers, retries, fallback and the chunk cache for the job worker. When absent it is
   * built from the environment (docs/providers.md), so every launcher gets the same behaviour.
   */
  speech?: SpeechRouter;
  log: Logger;
  host?: string;
  port?: number;
  /** Callers in this process skip the socket (the embedded default; see lib/rpc/in-process.ts). */
  inProcess?: boolean;
  /** Articles rendered at once by the worker. */
  concurrency?: number;
  /** Lifetime of ad-hoc (Synthesize) audio; default 24 h (adhoc.ts). */
  adhocTtlMs?: number;
  /** Deadline of one article's text preparation or chunk plan (AUDIO_TEXT_TIMEOUT_MS; default 5 s, text/work.ts). */
  textTimeoutMs?: number;
  /** Where text work runs; default a thread pool of its own, closed with the service. */
  text?: TextWork;
  /** Overrides for the worker (retries, lease), mainly for tests. */
  worker?: Partial<Pick<AudioWorkerOptions, "maxAttempts" | "ackWaitMs" | "backoffMs" | "keepAliveMs" | "chunkConcurrency" | "drainTimeoutMs">>;
}

/** The caller owns the dependencies: close() stops the worker and the server, not the bus, store or engine. */
export async function startAudioService(opts: AudioServiceOptions): Promise<RunningService> {
  const resolveCaller = createCallerResolver({ auth: opts.auth, internalToken: opts.internalToken });
  // Reservations are internal-token calls; `auth` carries no token of its own.
  const internalCall = { headers: { authorization: `Bearer ${opts.internalToken}` } };
  const quota: SynthesisQuota = {
    async reserve(projectId, chars) {
      const r = await opts.auth.reserveAudification({ projectId, day: new Date().toISOString().slice(0, 10), chars: BigInt(chars) }, internalCall);
      if (r.outcome === ReservationOutcome.RESERVED) return { outcome: "reserved", debited: r.creditChars !== undefined };
      return { outcome: r.outcome === ReservationOutcome.NO_MONEY ? "no_money" : "limit_reached" };
    },
    async refund(projectId, chars) {
      if (chars > 0) await opts.auth.refundAudification({ projectId, chars: BigInt(chars) }, internalCall);
    },
  };
  // Built first: a provider configuration error stops start-up before anything listens.
  const speech = opts.speech ?? (await speechRouterFromEnv(process.env, { engine: opts.engine, log: opts.log, localConcurrency: opts.worker?.chunkConcurrency }));
  const deployment = speech.loudness ?? DEFAULT_LOUDNESS;
  const loudnessFor = async (projectId: string | undefined): Promise<LoudnessTarget> => {
    if (projectId === undefined) return deployment;
    try {
      const r = await opts.auth.getProjectSettings({ projectId }, internalCall);
      const settings = JSON.parse(r.settings?.settingsJson ?? "{}") as Partial<ProjectSettings>;
      return projectTarget(deployment, settings.loudness);
    } catch (err) {
      // The synthesis is paid for already: it goes on at the deployment's target rather than fail.
      opts.log.warn({ err: errorMessage(err), projectId }, "project settings unreadable; ad-hoc synthesis at the deployment's loudness target");
      return deployment;
    }
  };
  // Per-article text work runs off this event loop, with a deadline.
  const text = opts.text ?? createTextPool(opts.textTimeoutMs ? { timeoutMs: opts.textTimeoutMs } : {});
  const closeText = () => (opts.text ? Promise.resolve() : text.close());
  const sweeper = startAdhocSweeper({ blobs: opts.blobs, ttlMs: opts.adhocTtlMs, log: opts.log });
  const server = await startRpcServer({
    name: "audio",
    services: [AudioService.typeName],
    host: opts.host,
    port: opts.port,
    inProcess: opts.inProcess,
    log: opts.log,
    routes(router) {
      router.service(
        AudioService,
        audioServiceImpl({
          resolveCaller,
          blobs: opts.blobs,
          engine: opts.engine,
          log: opts.log,
          chunkConcurrency: opts.worker?.chunkConcurrency,
          text,
          quota,
          loudnessFor,
          adhocTtlMs: sweeper.ttlMs,
          adhocSweepEveryMs: sweeper.everyMs,
          voices: () => voiceCatalog(speech.loaded),
          sample: sampleRenderer(speech, deployment),
        }),
      );
    },
  });
  let worker;
  try {
    worker = await startAudioWorker({ ...opts.worker, speech, bus: opts.bus, articles: opts.articles, blobs: opts.blobs, engine: opts.engine, text, log: opts.log, concurrency: opts.concurrency });
  } catch (e) {
    sweeper.stop();
    await server.close();
    await closeText();
    throw e;
  }
  let closing: Promise<void> | undefined;
  return {
    name: "audio",
    url: server.url,
    port: server.port,
    setServing: (s) => server.setServing(s),
    close() {
      closing ??= (async () => {
        server.setServing(false);
        sweeper.stop();
        // Jobs in hand finish (and report) before the listener goes away.
        await worker.stop();
        await server.close();
        await closeText();
      })();
      return closing;
    },
  };
}
