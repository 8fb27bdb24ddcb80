// The public HTTP gateway: REST API, docs, audio files and probes on one
// Koa app. It owns no data; articles calls go to ArticlesService with the
// publisher's own token.
import http from "node:http";
import type net from "node:net";
import Koa from "koa";
import { Router } from "@koa/router";
import { ArticlesService } from "../gen/articles/v1/articles_pb.js";
import { ListenerService } from "../gen/articles/v1/listener_pb.js";
import { PlayerService } from "../gen/auth/v1/player_pb.js";
import type { BlobStore } from "../lib/blob/port.js";
import type { Logger } from "../lib/log.js";
import { httpDrain, stopListening } from "../lib/net/http-drain.js";
import { rpcClient } from "../lib/rpc/client.js";
import type { RunningService } from "../lib/service.js";
import { DEFAULT_MAX_BODY_BYTES, deferContinue, longUploads } from "./body.js";
import { errorMiddleware } from "./errors.js";
import { importPacer, limitRoutes, rateLimitMiddleware, type RateLimitMiddlewareOptions } from "./ratelimit.js";
import { gatewayMetrics } from "./metrics.js";
import { requestContext } from "./request-context.js";
import { indexRoutes } from "./route-index.js";
import { publisherCallers, writerCheck } from "./writer-check.js";
import { articleRoutes } from "./routes/articles.js";
import { jobRoutes } from "./routes/jobs.js";
import { ArticleJobsService } from "../gen/articles/v1/jobs_pb.js";
import { importRoutes } from "./routes/import.js";
import { DEFAULT_IMPORT_LIMITS, type ImportLimits } from "./import-limits.js";
import { importLanes } from "./import-lanes.js";
import { audioRoutes } from "./routes/audio.js";
import { liveAnnouncements, liveAudioRoutes, type LiveAudioOptions } from "./routes/live-audio.js";
import { docsRoutes } from "./routes/docs.js";
import { feedRoutes } from "./routes/feeds.js";
import { oembedRoutes } from "./routes/oembed.js";
import { createListeningBuffer, type ListeningBuffer } from "./listening-buffer.js";
import { podcastDownloads } from "./podcast-downloads.js";
import { playerRoutes, type PlayerEventLimits } from "./routes/player.js";
import { statsRoutes } from "./routes/stats.js";
import { healthRoutes, type HealthTarget } from "./routes/health.js";
import { pronunciationRoutes } from "./routes/pronunciations.js";
import { sourceRoutes } from "./routes/sources.js";
import { SourcesService } from "../gen/articles/v1/sources_pb.js";
import { pronunciationPreviewRoutes } from "./routes/pronunciation-preview.js";
import { voicesRoutes } from "./routes/voices.js";
import { tokenRoutes } from "./routes/token.js";
import { AudioService } from "../gen/audio/v1/audio_pb.js";
import { consoleMiddleware } from "../console/serve.js";

export interface GatewayOptions {
  articlesUrl: string;
  /**
   * Grows with every write of articles, tokens and projects; only where this process makes all of
   * them (the embedded default on SQLite). Read answers are then reused until it grows.
   */
  storeChanges?: () => number;
  /** As storeChanges, not grown by the insert of a new article: answers about one article are kept through creates. */
  storeRewrites?: () => number;
  /** The audio service: POST /api/pronunciations/preview synthesizes through it, GET /api/voices asks it. Absent: those endpoints are off. */
  audioUrl?: string;
  /** PUBLIC_BASE_URL: base of every absolute link handed out (public-links.ts); default: each request's origin, with Vary: Host. */
  publicBaseUrl?: string;
  /** TRUST_PROXY: X-Forwarded-Proto/-Host/-For count (Koa's `proxy`). */
  trustProxy?: boolean;
  /** Listening-event batches per player key; defaults in routes/player.ts. */
  playerEventRate?: PlayerEventLimits;
  /** Services whose grpc.health.v1 status decides /healthz and /readyz. */
  healthTargets: HealthTarget[];
  blobs: BlobStore;
  log: Logger;
  /** Default 127.0.0.1; the process entry point passes HOST. */
  host?: string;
  /** 0 picks a free port. */
  port?: number;
  maxBodyBytes?: number;
  /** Upper bound for one upstream call. */
  rpcTimeoutMs?: number;
  /** Waits and limits of the live streams of audio made on demand (routes/live-audio.ts); defaults for production. */
  liveAudio?: LiveAudioOptions;
  /** How long close() lets in-flight requests finish before cutting them. */
  drainMs?: number;
  /**
   * The auth service: writes are refused with 401/403 before their body is read, and it
   * holds player keys and settings. Absent: the player, feed and oEmbed endpoints are off.
   */
  authUrl?: string;
  /** Credential the gateway presents to the auth service. */
  internalToken?: string;
  /** Also serve /metrics on the public port (off by default: use a METRICS_PORT listener). */
  metricsOnPublicPort?: boolean;
  /** Per-project rate limits (ratelimit-setup.ts); absent = none. */
  rateLimit?: RateLimitMiddlewareOptions;
  /** Caps on open imports and the slowest import upload (import-limits.ts); absent = the documented defaults. */
  imports?: ImportLimits;
}

/** How long the gateway lets requests in flight finish after SIGTERM: most of the grace period, the rest closes the connections. */
export function gatewayDrainMsOf(shutdownGraceMs: number): number {
  return Math.max(1_000, shutdownGraceMs - 3_000);
}

export async function startGateway(opts: GatewayOptions): Promise<RunningService> {
  let serving = true;
  const app = new Koa();
  app.silent = true;
  app.proxy = opts.trustProxy ?? false;
  // Stream failures after the headers went out cannot become a JSON error any more.
  app.on("error", (err: Error) => opts.log.warn({ err: { message: err.message } }, "response stream failed"));

  const router = new Router();
  const maxBodyBytes = opts.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const callers = opts.authUrl ? publisherCallers(opts.authUrl, opts.internalToken) : undefined;
  docsRoutes(router);
  if (callers) tokenRoutes(router, callers);
  // Before the articles' routes: /api/articles/bulk is no article id.
  jobRoutes(router, { client: rpcClient(ArticleJobsService, opts.articlesUrl, { timeoutMs: opts.rpcTimeoutMs ?? 30_000 }), maxBodyBytes, checkWriter: callers && writerCheck(callers) });
  // Imports and single creates take turns per project in one set of lanes.
  const lanes = importLanes((opts.imports ?? DEFAULT_IMPORT_LIMITS).callsInFlight);
  articleRoutes(router, {
    client: rpcClient(ArticlesService, opts.articlesUrl, { timeoutMs: opts.rpcTimeoutMs ?? 30_000 }),
    maxBodyBytes,
    checkWriter: callers && writerCheck(callers),
    publicBaseUrl: opts.publicBaseUrl,
    blobs: opts.blobs,
    storeChanges: opts.storeChanges,
    storeRewrites: opts.storeRewrites,
    lanes,
    callers,
  });
  importRoutes(router, {
    client: rpcClient(ArticlesService, opts.articlesUrl, { timeoutMs: opts.rpcTimeoutMs ?? 30_000 }),
    maxBodyBytes,
    checkWriter: callers && writerCheck(callers),
    pacer: opts.rateLimit ? importPacer(opts.rateLimit) : undefined,
    limits: opts.imports,
    callers,
    lanes,
  });
  pronunciationRoutes(router, {
    client: rpcClient(ArticlesService, opts.articlesUrl, { timeoutMs: opts.rpcTimeoutMs ?? 30_000 }),
    maxBodyBytes: opts.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
  });
  sourceRoutes(router, {
    client: rpcClient(SourcesService, opts.articlesUrl, { timeoutMs: opts.rpcTimeoutMs ?? 30_000 }),
    maxBodyBytes,
    checkWriter: callers && writerCheck(callers),
  });
  if (opts.audioUrl) {
    const audio = rpcClient(AudioService, opts.audioUrl, { timeoutMs: opts.rpcTimeoutMs ?? 30_000 });
    pronunciationPreviewRoutes(router, { audio, blobs: opts.blobs, maxBodyBytes, checkWriter: callers && writerCheck(callers) });
    voicesRoutes(router, { audio, publicBaseUrl: opts.publicBaseUrl });
  }
  // With the player's routes, streams are waited for only where this gateway's lookups handed them out.
  const live = opts.authUrl ? liveAnnouncements() : undefined;
  liveAudioRoutes(router, opts.blobs, { announced: live, ...opts.liveAudio });
  const timeoutMs = opts.rpcTimeoutMs ?? 30_000;
  const listener = rpcClient(ListenerService, opts.articlesUrl, { timeoutMs });
  statsRoutes(router, listener);
  let listeningEvents: ListeningBuffer | undefined;
  if (opts.authUrl) listeningEvents = createListeningBuffer(listener, opts.log);
  audioRoutes(router, opts.blobs, listeningEvents && podcastDownloads(listeningEvents, opts.log));
  if (opts.authUrl && listeningEvents) {
    const listenerSide = { player: rpcClient(PlayerService, opts.authUrl, { timeoutMs }), listener, publicBaseUrl: opts.publicBaseUrl };
    playerRoutes(router, { ...listenerSide, events: listeningEvents, eventRate: opts.playerEventRate, live });
    feedRoutes(router, { ...listenerSide, blobs: opts.blobs });
    oembedRoutes(router, listenerSide);
  }
  healthRoutes(router, opts.healthTargets, () => serving);
  // Counted by the route a request reached, however it spelled the path (ratelimit.ts).
  if (opts.rateLimit) limitRoutes(router, rateLimitMiddleware(opts.rateLimit));
  // Every route is in place: each request tests only the routes its path can reach.
  indexRoutes(router);

  app.use(gatewayMetrics({ serve: opts.metricsOnPublicPort ?? false }));
  app.use(requestContext(opts.log));
  // Every method some route serves at a path, for the 405 of a method no route knows.
  const methodsAt = (path: string) => [...new Set(router.match(path, "GET").path.flatMap((l) => l.methods))];
  // A refused upload may be up to the limit again past what was read (a 12 MiB body at 10 MiB is answered whole).
  app.use(errorMiddleware({ allowedMethods: methodsAt, drainBytes: 2 * maxBodyBytes }));
  // The publisher console (/console): static files under its own CSP (console/serve.ts).
  app.use(consoleMiddleware({ log: opts.log }));
  app.use(router.routes());
  app.use(router.allowedMethods());

  const handle = app.callback();
  const server = http.createServer(handle);
  // "Expect: 100-continue" is answered only when the body is actually read
  // (after the token check), so a refused client never sends its upload.
  server.on("checkContinue", (req, res) => handle(deferContinue(req, res), res));
  server.keepAliveTimeout = 65_000;
  // Bounds slow-loris style uploads; large bodies at normal speed fit easily.
  server.requestTimeout = 120_000;
  const drain = httpDrain(server);
  server.on("clientError", (err: NodeJS.ErrnoException, socket: net.Socket) => {
    // A bulk import reads its body for as long as it takes, under an idle timeout of its own (routes/import.ts).
    if (err.code === "ERR_HTTP_REQUEST_TIMEOUT" && longUploads.has(socket)) return;
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n{"result":"fail","message":"Malformed HTTP request"}');
    else socket.destroy();
  });

  const host = opts.host ?? "127.0.0.1";
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port ?? 0, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const port = (server.address() as net.AddressInfo).port;
  const url = `http://${host.includes(":") ? `[${host}]` : host}:${port}`;
  opts.log.info({ url }, "gateway listening");

  let closed: Promise<void> | undefined;
  return {
    name: "gateway",
    url,
    port,
    setServing(v: boolean) {
      serving = v;
    },
    close() {
      closed ??= new Promise<void>((resolve) => {
        serving = false;
        // Requests in flight and arriving on open connections are answered
        // (with `Connection: close`); no new connection is accepted.
        const drained = drain.begin(opts.drainMs ?? 10_000);
        stopListening(server, () => {
          drained();
          // Events already answered 204 still reach the articles service.
          void (listeningEvents?.close() ?? Promise.resolve()).finally(resolve);
        });
      });
      return closed;
    },
  };
}
