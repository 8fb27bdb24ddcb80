// The embedded default: every service in one process, each on its own
// loopback Connect port, calling the others through Connect clients that
// skip the socket because the callee is in the same process (in-process.ts), with the
// embedded stores under DATA_DIR, the in-process bus, audio files in a
// directory and the local synthesizer. `npm start` runs this.
import { PLAYER_VARS, playerEventLimits } from "../gateway/routes/player.js";
import { LIVE_AUDIO_VARS, liveAudioOptionsOf } from "../gateway/routes/live-audio.js";
import { randomBytes } from "node:crypto";
import { mkdir } from "node:fs/promises";
import net from "node:net";
import v8 from "node:v8";
import { ArticlesService } from "../gen/articles/v1/articles_pb.js";
import { AuthService } from "../gen/auth/v1/auth_pb.js";
import { PlayerService } from "../gen/auth/v1/player_pb.js";
import { BUS_VARS, DATA_VARS, openBlobStore, openJobBus } from "../lib/adapters.js";
import { createMemoryBus } from "../lib/bus/memory.js";
import { ConfigError, loadConfig } from "../lib/config.js";
import { logger } from "../lib/log.js";
import { maybeStartMetricsServer, METRICS_VARS, sampleArticleStatuses, sampleQueue } from "../lib/metrics.js";
import { closeMongo } from "../lib/mongo.js";
import { closeRpcClients, rpcClient } from "../lib/rpc/client.js";
import type { RunningService } from "../lib/service.js";
import { onShutdown, SHUTDOWN_VARS, startedByNpm } from "../lib/service.js";
import { privateAllowList, startArticlesService } from "../services/articles/app.js";
import { ON_DEMAND_BUDGET_VARS, onDemandBudgetDefaults } from "../services/articles/on-demand-budget.js";
import { PAGE_FETCH_VARS, pageQueueLimits } from "../services/articles/pages/queue.js";
import { openStatsStore } from "../services/articles/stats/open.js";
import { openSourceStore } from "../services/articles/sources/open.js";
import { SOURCE_VARS, sourceOptionsOf } from "../services/articles/sources/config.js";
import { listeningNames, natsListeningChannel } from "../lib/bus/listening.js";
import { ARTICLES_UPGRADE, openArticleStore } from "../services/articles/store/open.js";
import { AUDIO_FILES_VARS } from "../services/articles/audio-files.js";
import { startAudioService } from "../services/audio/app.js";
import { AUDIO_DRAIN_VARS, audioDrainMsOf } from "../services/audio/drain.js";
import { createLocalEngine } from "../services/audio/engine/index.js";
import { speechRouterFromEnv } from "../services/audio/providers/config.js";
import { TEXT_VARS } from "../services/audio/text/work.js";
import { startAuthService } from "../services/auth/app.js";
import { OEMBED_VARS, oembedVerifierConfig } from "../services/auth/oembed-hosts.js";
import { provisionTokens } from "../services/auth/provision.js";
import { openAuthStore } from "../services/auth/store/open.js";
import type { AuthStore } from "../services/auth/store/port.js";
import type { ArticleStore } from "../services/articles/store/port.js";
import { NEDB_RELEASE, upgradeFromNedb } from "../lib/store/nedb-upgrade.js";
import { gatewayDrainMsOf, startGateway } from "../gateway/app.js";
import { defaultLimitsOf, gatewayRateLimit, RATE_LIMIT_VARS } from "../gateway/ratelimit-setup.js";
import { openJobStore } from "../services/articles/jobs/open.js";
import { IMPORT_VARS, importLimitsOf } from "../gateway/import-limits.js";
import { reservePort } from "../lib/net/free-port.js";
import { audioBaseUrlOf, publicBaseUrlOf, PUBLIC_URL_VARS, warnWithoutPublicBaseUrl } from "../lib/public-url.js";
import { TRUST_PROXY_VARS } from "../gateway/public-links.js";

export const EMBEDDED_VARS = {
  PORT: { type: "integer", minimum: 0, maximum: 65535, default: 8080, description: "public HTTP port of the gateway" },
  HOST: { type: "string", default: "0.0.0.0", description: "public bind address of the gateway" },
  RPC_HOST: { type: "string", default: "127.0.0.1", description: "bind address of the internal RPC listeners" },
  AUTH_PORT: { type: "integer", minimum: 0, maximum: 65535, default: 0, description: "auth RPC port (0 = free port)" },
  ARTICLES_PORT: { type: "integer", minimum: 0, maximum: 65535, default: 0, description: "articles RPC port (0 = free port)" },
  AUDIO_PORT: { type: "integer", minimum: 0, maximum: 65535, default: 0, description: "audio RPC port (0 = free port)" },
  RPC_IN_PROCESS: { type: "boolean", default: true, description: "calls between the services of this process skip the loopback socket (they still listen for outside clients); false sends them over HTTP/2" },
  ...DATA_VARS,
  ...BUS_VARS,
  SEED_TOKENS: { type: "string", format: "json", description: "JSON [{token, project, scope}] provisioned at start" },
  ADMIN_TOKEN: { type: "string", pattern: "^\\S{16,}$", description: "admin credential (16+ characters); unset disables the admin RPCs" },
  INTERNAL_TOKEN: { type: "string", pattern: "^\\S{16,}$", description: "service-to-service token (16+ characters); random per start when unset" },
  ...PUBLIC_URL_VARS,
  ...TRUST_PROXY_VARS,
  MAX_BODY_BYTES: { type: "integer", minimum: 1024, default: 10 * 1024 * 1024, description: "larger request bodies get 413" },
  AUDIO_CONCURRENCY: { type: "integer", minimum: 1, maximum: 64, default: 2, description: "articles rendered at once" },
  AUDIO_THREADS: { type: "integer", minimum: 1, maximum: 64, description: "synthesizer threads (default: CPU count)" },
  AUDIO_ENGINE: { type: "string", enum: ["auto", "wasm", "native"], default: "auto", description: "local synthesizer: native espeak-ng+lame when installed (auto), or always WASM" },
  ADHOC_AUDIO_TTL_HOURS: { type: "number", minimum: 0.1, maximum: 8760, default: 24, description: "ad-hoc (Synthesize) audio is deleted after this many hours" },
  ...TEXT_VARS,
  FETCH_ALLOW_PRIVATE: { type: "string", description: "comma-separated host[:port] or address[:port] entries that recrawls, webhooks and oEmbed host checks may reach although private (e.g. an intranet CMS); with a port, only that port" },
  ...RATE_LIMIT_VARS,
  ...IMPORT_VARS,
  ...PLAYER_VARS,
  ...LIVE_AUDIO_VARS,
  ...ON_DEMAND_BUDGET_VARS,
  ...PAGE_FETCH_VARS,
  ...SOURCE_VARS,
  ...OEMBED_VARS,
  // One METRICS_PORT listener covers every service of the process.
  ...METRICS_VARS,
  METRICS_ON_PUBLIC_PORT: { type: "boolean", default: false, description: "also serve /metrics on PORT (off: only the METRICS_PORT listener serves it)" },
  ...SHUTDOWN_VARS,
  ...AUDIO_FILES_VARS,
  ...AUDIO_DRAIN_VARS,
  HEAP_GROWING_PERCENT: { type: "integer", minimum: 0, maximum: 1000, default: 50, description: "after a full garbage collection the heap may grow this many percent over what is live before the next one (V8 --heap-growing-percent); 0 leaves V8's own factor, which let request garbage take the process past 300 MB under load" },
} as const;

export type EmbeddedEnv = Record<string, string | undefined>;

/**
 * Fails start-up, naming the variable, when a fixed port is taken. Checked
 * before anything is created: on a first start the demo project's tokens are
 * printed once, and a start that died afterwards on a busy port would lose
 * them for good (the next start finds the project and prints nothing).
 */
async function assertPortsFree(ports: { variable: string; host: string; port: number | undefined }[]): Promise<void> {
  for (const { variable, host, port } of ports) {
    if (!port) continue;
    await new Promise<void>((resolve, reject) => {
      const probe = net.createServer();
      probe.once("error", (err: NodeJS.ErrnoException) => {
        if (err.code === "EADDRINUSE") reject(new ConfigError(`Invalid configuration: ${variable}=${port} is already in use on ${host} (another instance running?); stop it or choose another ${variable}`));
        else if (err.code === "EACCES") reject(new ConfigError(`Invalid configuration: ${variable}=${port} on ${host} needs privileges this process lacks; choose a port above 1023`));
        else reject(err);
      });
      probe.listen(port, host, () => probe.close(() => resolve()));
    });
  }
}

export interface Embedded {
  /** Public base URL of the gateway, e.g. http://127.0.0.1:8080 */
  url: string;
  services: RunningService[];
  close(): Promise<void>;
}

export async function startEmbedded(env: EmbeddedEnv = process.env, out: NodeJS.WritableStream = process.stdout): Promise<Embedded> {
  const cfg = loadConfig(EMBEDDED_VARS, env);
  const audioDrainMs = audioDrainMsOf(cfg);
  const log = logger("embedded");
  // One process on a small machine: V8 would otherwise let the old generation fill with dead request
  // objects to 2-4 times the live heap before collecting (315 MB peaks under GET load, 229 MB with 50 %).
  // A V8 flag for the whole process, read at each collection, so setting it now takes effect.
  if (cfg.HEAP_GROWING_PERCENT > 0) v8.setFlagsFromString(`--heap-growing-percent=${cfg.HEAP_GROWING_PERCENT}`);
  warnWithoutPublicBaseUrl(cfg, env, log);
  await assertPortsFree([
    { variable: "PORT", host: cfg.HOST, port: cfg.PORT },
    { variable: "AUTH_PORT", host: cfg.RPC_HOST, port: cfg.AUTH_PORT },
    { variable: "ARTICLES_PORT", host: cfg.RPC_HOST, port: cfg.ARTICLES_PORT },
    { variable: "AUDIO_PORT", host: cfg.RPC_HOST, port: cfg.AUDIO_PORT },
    { variable: "METRICS_PORT", host: cfg.METRICS_HOST, port: cfg.METRICS_PORT },
  ]);
  const internalToken = cfg.INTERNAL_TOKEN ?? randomBytes(32).toString("base64url");
  if (!cfg.MONGODB_URL) await mkdir(cfg.DATA_DIR, { recursive: true });
  // A DATA_DIR of the NeDB release is carried over before any store opens it.
  if (!cfg.MONGODB_URL) await upgradeFromNedb(cfg.DATA_DIR, [NEDB_RELEASE.auth, ARTICLES_UPGRADE], { log });

  const closers: Array<() => Promise<void>> = [];
  const closeAll = async () => {
    for (const c of closers.reverse()) await c().catch((err) => log.error({ err }, "shutdown step failed"));
    closeRpcClients();
    await closeMongo();
  };

  // The token banner names the public address before the gateway listens. With PORT=0 the port
  // is picked here and held until then: start-up takes seconds, and meanwhile any connection
  // this machine opens could be given it.
  const reserved = cfg.PORT === 0 ? await reservePort(cfg.HOST) : undefined;
  const publicPort = reserved?.port ?? cfg.PORT;
  try {
    const bus = await openJobBus(cfg, log, createMemoryBus());
    closers.push(() => bus.close());
    const blobs = await openBlobStore(cfg);
    closers.push(() => blobs.close());

    const authStore = await openAuthStore(cfg);
    closers.push(() => authStore.close());
    await provisionTokens(authStore, cfg.SEED_TOKENS, out, publicBaseUrlOf(cfg) ?? `http://localhost:${publicPort}`, logger("auth"));
    const auth = await startAuthService({ store: authStore, adminToken: cfg.ADMIN_TOKEN, internalToken, log: logger("auth"), host: cfg.RPC_HOST, port: cfg.AUTH_PORT, inProcess: cfg.RPC_IN_PROCESS, webhookTargets: privateAllowList(cfg.FETCH_ALLOW_PRIVATE), oembed: oembedVerifierConfig(cfg, privateAllowList(cfg.FETCH_ALLOW_PRIVATE)) });
    closers.push(() => auth.close());

    const articleStore = await openArticleStore(cfg);
    closers.push(() => articleStore.close());
    const jobStore = await openJobStore(cfg);
    closers.push(() => jobStore.close());
    // Before the articles service: its bulk jobs are paced through the very buckets the gateway counts writes in.
    const rateLimit = await gatewayRateLimit(cfg, { url: auth.url, internalToken }, logger("gateway"));
    if (rateLimit) closers.push(() => rateLimit.close());
    const stats = await openStatsStore(cfg);
    const sourceStore = await openSourceStore(cfg);
    closers.push(() => sourceStore.close());
    const articles = await startArticlesService({
      store: articleStore,
      bus,
      auth: rpcClient(AuthService, auth.url),
      player: rpcClient(PlayerService, auth.url, { token: internalToken }),
      stats,
      listening: cfg.NATS_URL ? await natsListeningChannel({ url: cfg.NATS_URL, log: logger("articles"), ...listeningNames(cfg.NATS_STREAM) }) : undefined,
      settingsFrom: rpcClient(AuthService, auth.url, { token: internalToken }),
      fetchOptions: privateAllowList(cfg.FETCH_ALLOW_PRIVATE),
      internalToken,
      audioBaseUrl: audioBaseUrlOf(cfg),
      log: logger("articles"),
      host: cfg.RPC_HOST,
      port: cfg.ARTICLES_PORT,
      inProcess: cfg.RPC_IN_PROCESS,
      blobs,
      supersededGraceMs: cfg.SUPERSEDED_AUDIO_GRACE_MS,
      onDemandBudget: { defaults: onDemandBudgetDefaults(cfg) },
      pageFetches: pageQueueLimits(cfg),
      jobs: jobStore,
      bulkPace: rateLimit && { store: rateLimit.store, shared: rateLimit.shared, defaults: defaultLimitsOf(cfg).writes },
      sources: { store: sourceStore, ...sourceOptionsOf(cfg) },
    });
    closers.push(() => articles.close());
    const statusSampler = sampleArticleStatuses(articleStore, cfg.METRICS_SAMPLE_MS, log);
    closers.push(async () => statusSampler?.stop());

    const engine = await createLocalEngine({ threads: cfg.AUDIO_THREADS, native: cfg.AUDIO_ENGINE === "wasm" ? "never" : cfg.AUDIO_ENGINE === "native" ? "always" : "auto" });
    closers.push(() => engine.close());
    log.info({ engine: engine.name }, "local speech engine ready");
    // Providers come from the same env as everything else, so a bad provider
    // variable stops start-up here, named, instead of at the first job.
    const speech = await speechRouterFromEnv(env, { engine, log: logger("audio") });
    const audio = await startAudioService({
      speech,
      bus,
      blobs,
      engine,
      articles: rpcClient(ArticlesService, articles.url, { token: internalToken }),
      auth: rpcClient(AuthService, auth.url),
      internalToken,
      log: logger("audio"),
      host: cfg.RPC_HOST,
      port: cfg.AUDIO_PORT,
      inProcess: cfg.RPC_IN_PROCESS,
      concurrency: cfg.AUDIO_CONCURRENCY,
      adhocTtlMs: cfg.ADHOC_AUDIO_TTL_HOURS * 3_600_000,
      textTimeoutMs: cfg.AUDIO_TEXT_TIMEOUT_MS,
      worker: { drainTimeoutMs: audioDrainMs },
    });
    closers.push(() => audio.close());
    const queueSampler = sampleQueue(bus, cfg.METRICS_SAMPLE_MS, log);
    closers.push(async () => queueSampler?.stop());

    await reserved?.release();
    const gateway = await startGateway({
      storeChanges: storeChangesOf(authStore, articleStore),
      storeRewrites: storeRewritesOf(authStore, articleStore),
      rateLimit: rateLimit?.options,
      imports: importLimitsOf(cfg),
      playerEventRate: playerEventLimits(cfg),
      articlesUrl: articles.url,
      audioUrl: audio.url,
      publicBaseUrl: publicBaseUrlOf(cfg),
      trustProxy: cfg.TRUST_PROXY,
      healthTargets: [
        { name: "auth", url: auth.url },
        { name: "articles", url: articles.url },
        { name: "audio", url: audio.url },
      ],
      blobs,
      log: logger("gateway"),
      host: cfg.HOST,
      port: publicPort,
      maxBodyBytes: cfg.MAX_BODY_BYTES,
      authUrl: auth.url,
      internalToken,
      metricsOnPublicPort: cfg.METRICS_ON_PUBLIC_PORT,
      drainMs: gatewayDrainMsOf(cfg.SHUTDOWN_GRACE_MS),
      liveAudio: liveAudioOptionsOf(cfg),
    });
    closers.push(() => gateway.close());
    const metrics = await maybeStartMetricsServer(cfg, log);
    if (metrics) closers.push(() => metrics.close());

    const services = [auth, articles, audio, gateway];
    const url = `http://${cfg.HOST === "0.0.0.0" || cfg.HOST === "::" ? "127.0.0.1" : cfg.HOST}:${gateway.port}`;
    // The auth URL is what `npm run admin` needs (AUTH_URL); it changes per start unless AUTH_PORT is set.
    log.info({ url, authUrl: auth.url, dataDir: cfg.MONGODB_URL ? undefined : cfg.DATA_DIR }, `article audio platform ready: API at ${url}/api, docs at ${url}/api/docs`);
    // For the person at the terminal, in plain lines (the JSON line above is for machines).
    out.write(readyBanner(publicBaseUrlOf(cfg) ?? (cfg.HOST === "0.0.0.0" || cfg.HOST === "::" ? `http://localhost:${gateway.port}` : url)));
    return {
      url,
      services,
      async close() {
        // Readiness off everywhere first, then stop from the edge inwards.
        for (const s of services) s.setServing(false);
        await closeAll();
      },
    };
  } catch (err) {
    await reserved?.release();
    await closeAll();
    throw err;
  }
}

const isMain = import.meta.url === `file://${process.argv[1]}` || process.argv[1]?.endsWith("launch/embedded.ts");
if (isMain) {
  const log = logger("embedded");
  const started = startEmbedded();
  // Listening from the start: without a listener SIGTERM's default action
  // kills the process on the spot, also in the moment after "ready" is logged.
  // A stop during start-up closes the platform once it is up.
  let graceMs: number = SHUTDOWN_VARS.SHUTDOWN_GRACE_MS.default;
  try {
    graceMs = loadConfig(SHUTDOWN_VARS).SHUTDOWN_GRACE_MS;
  } catch {
    // startEmbedded reports the invalid value and exits.
  }
  // Under npm, npm is what a supervisor signals, and it may exit without passing the signal on.
  onShutdown(log, async () => (await started).close(), graceMs, { exitWithParent: startedByNpm() });
  started.catch((err: unknown) => {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
    } else {
      log.fatal({ err }, "start-up failed");
    }
    process.exit(1);
  });
}

/** Where to go once the platform is up; printed at every start. */
export function readyBanner(base: string): string {
  return [
    "",
    "  Article audio platform ready",
    `  API      : ${base}/api`,
    `  API docs : ${base}/api/docs`,
    `  console  : ${base}/console`,
    "",
    "",
  ].join("\n");
}

/**
 * What every read answer of the gateway is made from, as one growing number: present only when
 * both stores know every write (SQLite here; not MongoDB, which other processes may write).
 */
function storeChangesOf(auth: AuthStore, articles: ArticleStore): (() => number) | undefined {
  const a = auth.changes?.bind(auth);
  const b = articles.changes?.bind(articles);
  return a && b ? () => a() + b() : undefined;
}

/**
 * What an answer about one article already stored is made from: as storeChangesOf, except that
 * the insert of a new article does not grow it (every write of tokens and projects does).
 */
function storeRewritesOf(auth: AuthStore, articles: ArticleStore): (() => number) | undefined {
  const a = auth.changes?.bind(auth);
  const b = articles.rewrites?.bind(articles);
  return a && b ? () => a() + b() : undefined;
}
