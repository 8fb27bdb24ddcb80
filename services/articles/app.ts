// Starts the articles service on its own Connect port.
import { type Client, type Interceptor } from "@connectrpc/connect";
import { ArticlesService } from "../../gen/articles/v1/articles_pb.js";
import { ListenerService } from "../../gen/articles/v1/listener_pb.js";
import type { AuthService } from "../../gen/auth/v1/auth_pb.js";
import type { BlobStore } from "../../lib/blob/port.js";
import type { PlayerService } from "../../gen/auth/v1/player_pb.js";
import type { JobBus } from "../../lib/bus/port.js";
import type { Logger } from "../../lib/log.js";
import { createCallerResolver } from "../../lib/rpc/caller.js";
import { startRpcServer } from "../../lib/rpc/server.js";
import { loadLanguageDetector } from "../../lib/lang-detect.js";
import type { RunningService } from "../../lib/service.js";
import type { SafeFetchOptions } from "../../lib/net/safe-fetch.js";
import type { Admission } from "./admission/admit.js";
import { createAudioFiles } from "./audio-files.js";
import { startAdmissionScheduler } from "./admission/scheduler.js";
import { authSettingsSource, unboundedSettings } from "./admission/settings.js";
import { createStatusEmitter } from "./events/publish.js";
import { createWebhookDispatcher } from "./events/webhook.js";
import { allowPrivateFrom } from "../../lib/net/allow-list.js";
import { listenerHandlers } from "./handlers/listener.js";
import type { PageFetches, RequestAudio } from "./handlers/context.js";
import type { PageQueueLimits } from "./pages/queue.js";
import { startReconciler } from "./reconciler.js";
import { createArticlesParts } from "./service.js";
import { ArticleJobsService } from "../../gen/articles/v1/jobs_pb.js";
import { createBulkActions } from "./jobs/actions.js";
import { jobHandlers } from "./jobs/handlers.js";
import { openEmbeddedJobStore } from "./jobs/open.js";
import type { JobStore } from "./jobs/port.js";
import { startJobRunner } from "./jobs/runner.js";
import { createArticleWrites } from "./handlers/article-writes.js";
import { createWritePacer } from "../../lib/ratelimit/write-pacer.js";
import type { BucketPolicy } from "../../lib/ratelimit/port.js";
import { createListeningAggregator } from "./stats/aggregator.js";
import { openEmbeddedStatsStore } from "./stats/open.js";
import type { StatsStore } from "./stats/store.js";
import { directListeningChannel, type ListeningChannel } from "../../lib/bus/listening.js";
import type { ListeningBatch } from "./handlers/listener.js";
import type { ArticleStore } from "./store/port.js";
import { publicError } from "./errors.js";
import { createOnDemandBudget, type OnDemandBudgetDefaults } from "./on-demand-budget.js";
import type { BucketStore } from "../../lib/ratelimit/port.js";
import { SourcesService } from "../../gen/articles/v1/sources_pb.js";
import { startSources, type SourcesOptions } from "./sources/start.js";

export interface ArticlesServiceOptions {
  store: ArticleStore;
  bus: JobBus;
  auth: Client<typeof AuthService>;
  /** Resolves public player keys; it must send the internal token. Absent: player keys are refused. */
  player?: Client<typeof PlayerService>;
  /** Listening statistics; default: in memory (tests). */
  stats?: StatsStore;
  /** Where listening events travel from the ingest call to the aggregator; default: a direct call. */
  listening?: ListeningChannel<ListeningBatch>;
  /** How often counted listening events are written; default 1 s. */
  statsFlushMs?: number;
  internalToken: string;
  audioBaseUrl: string;
  log: Logger;
  host?: string;
  port?: number;
  /** Callers in this process skip the socket (the embedded default; see lib/rpc/in-process.ts). */
  inProcess?: boolean;
  /** Renders public player lookups may start per project (on-demand-budget.ts): the defaults and where the buckets live (default: memory). */
  onDemandBudget?: { defaults?: OnDemandBudgetDefaults; store?: BucketStore };
  /** false turns the reconciler off (tests that count publishes). */
  reconcile?: { intervalMs?: number; staleMs?: number } | false;
  /** How long a resolved publisher token is reused; default 5 s. */
  callerTtlMs?: number;
  /**
   * An auth client that sends the internal token: project settings, daily
   * limits, credit and webhooks come from it. Absent: every project is
   * unbounded, has no rules and no webhook.
   */
  settingsFrom?: Client<typeof AuthService>;
  /** Deferred-article retry and periodic recrawl periods. */
  schedule?: { deferredEveryMs?: number; recrawlEveryMs?: number } | false;
  /** Overrides for outbound fetches (tests allow loopback receivers). */
  fetchOptions?: SafeFetchOptions;
  /** Webhook retry policy; defaults in events/webhook.ts. */
  webhook?: { retries?: number; backoffMs?: number[] };
  /**
   * The audio storage: deleted articles' files are removed at once, superseded
   * revisions' after `supersededGraceMs` (default 10 minutes). Absent: files are kept.
   */
  blobs?: BlobStore;
  supersededGraceMs?: number;
  /** Bounds on background page fetches of articles created from a URL (PAGE_FETCHES, PAGE_FETCHES_PER_PROJECT). */
  pageFetches?: PageQueueLimits;
  /** Bulk jobs (jobs/); default: in memory (tests). */
  jobs?: JobStore;
  /**
   * The bucket store the gateway counts the projects' API writes in, and the deployment's default writes
   * policy: bulk jobs are paced through the same buckets. Absent: jobs are not paced (rate limits off).
   */
  bulkPace?: { store: BucketStore; shared?: boolean; defaults: BucketPolicy };
  /** Bulk job lease and scan periods (tests shorten them). */
  bulkRunner?: { leaseMs?: number; scanMs?: number; retryMs?: number };
  /** The feeds projects follow (sources/): where they are kept (default: in memory) and their bounds. */
  sources?: SourcesOptions;
}


/** Unexpected failures reach the caller as a plain Internal error (errors.ts). */
function hideInternalErrors(log: Logger): Interceptor {
  return (next) => async (req) => {
    try {
      return await next(req);
    } catch (err) {
      throw publicError(err, log, req.method.name);
    }
  };
}

/** FETCH_ALLOW_PRIVATE → safeFetch options: only the listed hosts or addresses (on the listed port, if one is given) may be private. */
export function privateAllowList(list: string | undefined): SafeFetchOptions | undefined {
  const allowPrivate = allowPrivateFrom(list);
  return allowPrivate ? { allowPrivate } : undefined;
}

export async function startArticlesService(opts: ArticlesServiceOptions): Promise<RunningService> {
  if (!opts.internalToken) throw new Error("startArticlesService: internalToken is required");
  const resolveCaller = createCallerResolver({ auth: opts.auth, player: opts.player, internalToken: opts.internalToken, ttlMs: opts.callerTtlMs });
  const stats = opts.stats ?? (await openEmbeddedStatsStore());
  const aggregator = createListeningAggregator({ stats, articles: opts.store, log: opts.log, flushMs: opts.statsFlushMs });
  const listening = opts.listening ?? directListeningChannel<ListeningBatch>();
  await listening.consume(async (b) => void (await aggregator.accept(b.projectId, b.events, new Date(b.at))));
  let requestAudio: RequestAudio | undefined;
  const settings = opts.settingsFrom ? authSettingsSource(opts.settingsFrom) : unboundedSettings();
  const onDemandBudget = createOnDemandBudget({ settingsOf: async (p) => (await settings.get(p)).onDemandBudget, ...opts.onDemandBudget });
  const listener = listenerHandlers({
    store: opts.store,
    stats,
    listening,
    resolveCaller,
    audioBaseUrl: opts.audioBaseUrl,
    requestAudio: (a, requestId, by) => (requestAudio ? requestAudio(a, requestId, by) : Promise.resolve(a)),
    onDemandBudget,
  });
  const webhooks = opts.settingsFrom
    ? createWebhookDispatcher({ log: opts.log, fetchOptions: opts.fetchOptions, retries: opts.webhook?.retries, backoffMs: opts.webhook?.backoffMs })
    : undefined;
  const emit = createStatusEmitter({ bus: opts.bus, settings, webhooks, log: opts.log });
  let admission: Admission | undefined;
  let pages: PageFetches | undefined;
  const audioFiles = opts.blobs ? createAudioFiles({ blobs: opts.blobs, store: opts.store, log: opts.log, graceMs: opts.supersededGraceMs }) : undefined;
  const { handlers, shared } = createArticlesParts({
    audioFiles,
    store: opts.store,
    bus: opts.bus,
    resolveCaller,
    audioBaseUrl: opts.audioBaseUrl,
    log: opts.log,
    settings,
    emit,
    recrawlFetch: opts.fetchOptions,
    onAdmission: (a) => (admission = a),
    onRequestAudio: (r) => (requestAudio = r),
    pageFetches: opts.pageFetches,
    onPages: (p) => (pages = p),
  });
  const sources = await startSources({ options: opts.sources, shared, admission: admission!, settings, emit, resolveCaller, fetchOptions: opts.fetchOptions, log: opts.log });

  const jobStore = opts.jobs ?? (await openEmbeddedJobStore());
  /** The project's writes policy as the gateway applies it: its settings over the defaults (the defaults while settings cannot be read). */
  const writesPolicy = async (projectId: string, defaults: BucketPolicy): Promise<BucketPolicy> => {
    try {
      return { ...defaults, ...(await settings.get(projectId)).rateLimit?.writes };
    } catch {
      return defaults;
    }
  };
  const bulkPace = opts.bulkPace;
  const runner = startJobRunner({
    store: jobStore,
    act: createBulkActions({ store: shared.store, writes: createArticleWrites(shared) }),
    pace: bulkPace && createWritePacer({ store: bulkPace.store, shared: bulkPace.shared, policyOf: (p) => writesPolicy(p, bulkPace.defaults) }),
    log: opts.log,
    ...opts.bulkRunner,
  });
  const jobs = jobHandlers(shared, jobStore, runner);

  const server = await startRpcServer({
    name: "articles",
    services: [ArticlesService.typeName, ListenerService.typeName, ArticleJobsService.typeName, SourcesService.typeName],
    routes: (router) => router.service(ArticlesService, handlers).service(ListenerService, listener).service(ArticleJobsService, jobs).service(SourcesService, sources.handlers),
    host: opts.host,
    port: opts.port,
    inProcess: opts.inProcess,
    log: opts.log,
    interceptors: [hideInternalErrors(opts.log)],
  });

  // Removals still due from before a restart (deleted articles, superseded revisions); in the background, start-up does not wait.
  audioFiles?.sweep().catch((err: unknown) => opts.log.warn({ err }, "audio sweep failed; it runs again at the next start"));

  // The content threads' code is made ready now (in the background); the threads start with the first article that needs one.
  admission!.content.prepare();
  // The language detector's database too (half a second of CPU, once), so no create without a lang waits for it.
  loadLanguageDetector().catch((err: unknown) => opts.log.warn({ err }, "the language detector did not load; creates without a lang will try again"));
  const admit = (a: { id: string; revision: number }) => admission!.admit(a.id, a.revision);
  const reconciler = opts.reconcile === false ? undefined : startReconciler({ store: opts.store, bus: opts.bus, log: opts.log, admit, fetchPage: (a) => pages!.add(a.projectId, a.id), ...opts.reconcile });
  const scheduler =
    opts.schedule === false
      ? undefined
      : startAdmissionScheduler({
          admission: admission!,
          recrawl: { store: opts.store, admission: admission!, settings, emit, log: opts.log, fetchOptions: opts.fetchOptions },
          log: opts.log,
          ...opts.schedule,
        });

  return {
    name: "articles",
    url: server.url,
    port: server.port,
    setServing: server.setServing,
    async close() {
      server.setServing(false);
      await sources.close();
      await runner.close();
      await reconciler?.stop();
      await scheduler?.stop();
      await pages?.close();
      audioFiles?.close();
      await admission?.close();
      await webhooks?.close();
      await server.close();
      await listening.close();
      await aggregator.close();
      if (!opts.jobs) await jobStore.close();
    },
  };
}
