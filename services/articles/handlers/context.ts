// What every group of ArticlesService handlers shares: the caller checks,
// publishing and admission, refunds. Built once per
// service; the handler modules take it instead of each rebuilding it.
import { Code, ConnectError, type HandlerContext } from "@connectrpc/connect";
import type { AudioJob, JobBus } from "../../../lib/bus/port.js";
import type { AudioTiming } from "../../../gen/articles/v1/articles_pb.js";
import type { Logger } from "../../../lib/log.js";
import type { SafeFetchOptions } from "../../../lib/net/safe-fetch.js";
import { requireInternal, requirePublisher, type CallerResolver } from "../../../lib/rpc/caller.js";
import { requestIdFields } from "../../../lib/rpc/request-id.js";
import { createAdmission, type Admission } from "../admission/admit.js";
import { unboundedSettings, type ProjectSettingsSource } from "../admission/settings.js";
import { toProtoArticle } from "../convert.js";
import type { AudioFiles } from "../audio-files.js";
import type { StatusEmitter } from "../events/publish.js";
import { createRepublisher } from "../republish.js";
import { isParked, type ArticleStore, type ListedArticle, type StoredArticle } from "../store/port.js";
import { withCachedPronunciations } from "../store/pronunciation-cache.js";
import * as v from "../validate.js";
import { fetchArticlePage } from "../pages/fetch-page.js";
import { createPageQueue, type PageQueueLimits } from "../pages/queue.js";

export interface ArticlesServiceDeps {
  store: ArticleStore;
  bus: JobBus;
  resolveCaller: CallerResolver;
  /** `{audio_url}`: where the gateway serves audio keys. */
  audioBaseUrl: string;
  log: Logger;
  /** A publish slower than this is abandoned to the reconciler; default 5 s. */
  publishTimeoutMs?: number;
  /** Limits, credit, rules and defaults per project; default: unbounded, no rules. */
  settings?: ProjectSettingsSource;
  /** Status-change events; default: none. */
  emit?: StatusEmitter;
  /** Receives the admission built here, for the reconciler and the deferred sweep. */
  onAdmission?: (admission: Admission, publish: (a: StoredArticle, requestId?: string) => Promise<void>) => void;
  /** Recrawl fetch overrides (tests allow loopback). */
  recrawlFetch?: SafeFetchOptions;
  /** Removes audio files of deleted articles and superseded revisions; default: files are kept. */
  audioFiles?: AudioFiles;
  /** Receives the on-demand trigger built here, for the listener calls (a player lookup asks for audio too). */
  onRequestAudio?: (requestAudio: RequestAudio) => void;
  /** Bounds on background page fetches (create from a URL); defaults in pages/queue.ts. */
  pageFetches?: PageQueueLimits;
  /** Receives the page fetches built here: the reconciler hands lost ones back, close() waits for them. */
  onPages?: (pages: PageFetches) => void;
  /**
   * Receives the service's create from a URL (handlers/create.ts), for callers inside the service
   * (a source's feed items): validated, bounded and charged as POST /api/articles with fetch.
   */
  onCreateFromPage?: (createFromPage: CreateFromPage) => void;
}

/** What a caller inside the service gives for an article made from a page; absent fields come from the page or the project. */
export interface PageCreate {
  url: string;
  title?: string;
  externalId?: string;
  labels?: string[];
  voice?: string;
  lang?: string;
  audio?: AudioTiming;
  /** ISO 8601 with a time zone (a feed item's date); absent: the page's, else none. */
  published?: string;
}

/** Creates an article from its page's URL (as POST /api/articles with `fetch: true`); answers its id at once. */
export type CreateFromPage = (projectId: string, page: PageCreate, requestId?: string) => Promise<string>;

/** Background page fetches of articles created from their URL. */
export interface PageFetches {
  /** Queues the article's fetch (false: queued already or the queue is full; the reconciler comes back to it). */
  add(projectId: string, id: string): boolean;
  close(): Promise<void>;
}

/**
 * Asks for a parked article's audio; answers the article as it is afterwards (anything not parked, unchanged).
 * `by` "listener": a public player lookup asked; its render is not counted against the daily limit (it has its own budget, on-demand-budget.ts).
 */
export type RequestAudio = (a: StoredArticle, requestId?: string, by?: "listener" | "publisher") => Promise<StoredArticle>;

/** Statuses in which a reservation was made but no synthesis has started; superseding them gives the characters back. */
const UNSTARTED = new Set(["waiting", "parsed"]);

export const notFound = (what: string) => new ConnectError(`Article ${what} not found`, Code.NotFound);
/** Error metadata naming the article that holds a taken externalId (CreateArticles hands it on as ItemError.existing_id). */
export const EXISTING_ID_KEY = "x-existing-article-id";
export const duplicate = (externalId: string, existingId?: string) =>
  new ConnectError(`externalId '${externalId}' is already used`, Code.AlreadyExists, existingId ? { [EXISTING_ID_KEY]: existingId } : undefined);

export type HandlerShared = ReturnType<typeof createHandlerShared>;

export function createHandlerShared(deps: ArticlesServiceDeps) {
  const { bus, log, audioBaseUrl } = deps;
  const store = withCachedPronunciations(deps.store);
  const publishTimeoutMs = deps.publishTimeoutMs ?? 5_000;
  const settings = deps.settings ?? unboundedSettings();
  const emit: StatusEmitter = deps.emit ?? (() => {});
  const toProto = (a: StoredArticle | ListedArticle) => toProtoArticle(a, audioBaseUrl);

  const publisher = async (ctx: HandlerContext, scope: "read" | "full") => requirePublisher(await deps.resolveCaller(ctx.requestHeader), scope);
  const internal = async (ctx: HandlerContext) => requireInternal(await deps.resolveCaller(ctx.requestHeader));

  async function publishWithTimeout(job: AudioJob): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        bus.publish(job),
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new Error(`publish timed out after ${publishTimeoutMs} ms`)), publishTimeoutMs);
        }),
      ]);
    } finally {
      clearTimeout(timer);
    }
  }

  const republisher = createRepublisher({ bus, log, publish: publishWithTimeout });

  /** The article is stored either way; a lost publish is re-sent when the bus is back (the reconciler is the safety net), not the publisher's problem. */
  async function publishJob(a: StoredArticle, requestId?: string): Promise<void> {
    // Someone is waiting for an on-demand article: its job goes first in the project's lane.
    const job = { articleId: a.id, projectId: a.projectId, revision: a.revision, ...(requestId ? { requestId } : {}), ...(a.demandedAt !== undefined ? { priority: true } : {}) };
    try {
      await publishWithTimeout(job);
      republisher.published(job);
    } catch (err) {
      republisher.failed(job);
      log.warn({ err, job, ...requestIdFields(requestId) }, "audio job publish failed; it is re-sent when the bus is back");
    }
  }

  const admission = createAdmission({ store, settings, publish: publishJob, emit, log });
  deps.onAdmission?.(admission, publishJob);
  // Renders a listener started: admitted alike, but their characters are debited without
  // counting against the publisher's daily limit (a public key must not use it up).
  const outside = settings.reserveOutsideDailyLimit?.bind(settings);
  const listenerSettings: ProjectSettingsSource = outside ? { ...settings, reserve: outside } : settings;
  const listenerAdmission = createAdmission({ store, settings: listenerSettings, publish: publishJob, emit, log, content: admission.content });

  /** Admission failures (auth unreachable, …) leave the article pending; the reconciler admits it later. */
  async function admitNow(a: StoredArticle, requestId: string | undefined, held = false): Promise<void> {
    try {
      // `held`: stored with its lease (admission.leaseUntil()), so no claim is needed.
      if (held) await admission.admitHeld(a, requestId);
      else await admission.admit(a.id, a.revision, requestId);
    } catch (err) {
      log.warn({ err, articleId: a.id, revision: a.revision, ...requestIdFields(requestId) }, "admission postponed to the reconciler");
    }
  }

  /**
   * Audio on demand: one conditional write unparks the article with its admission lease held,
   * then it is admitted as a create would be (limits and credit charged now) and its job
   * published first in line. Concurrent askers: one unparks, the others read the result.
   */
  const requestAudio: RequestAudio = async (a, requestId, by = "publisher") => {
    if (!isParked(a)) return a;
    const admitting = by === "listener" ? listenerAdmission : admission;
    const unparked = await store.unpark(a.projectId, a.id, admitting.leaseUntil());
    if (!unparked) return (await store.get(a.projectId, a.id)) ?? a;
    log.info({ articleId: a.id, projectId: a.projectId, revision: a.revision, by, ...requestIdFields(requestId) }, "audio requested on demand");
    try {
      return (await admitting.admitHeld(unparked, requestId)) ?? (await store.get(a.projectId, a.id)) ?? unparked;
    } catch (err) {
      // No longer parked: the reconciler admits it once the lease has lapsed.
      log.warn({ err, articleId: a.id, ...requestIdFields(requestId) }, "admission postponed to the reconciler");
      return unparked;
    }
  };
  deps.onRequestAudio?.(requestAudio);

  /**
   * Gives back the characters reserved for a revision that will now never be
   * synthesized. The reservation is cleared first (once, conditionally), so a
   * concurrent FailAudioJob or second edit cannot refund it again.
   */
  async function refundUnused(a: StoredArticle): Promise<void> {
    if (!a.reservedChars || !UNSTARTED.has(a.status)) return;
    try {
      if (await store.takeReservation(a.id, a.revision, a.reservedChars)) await settings.refund(a.projectId, a.reservedChars);
    } catch (err) {
      log.error({ err, articleId: a.id, chars: a.reservedChars }, "refund failed");
    }
  }

  /** The project's default voice when the publisher sent none; the platform default otherwise. */
  async function projectDefaultVoice(projectId: string): Promise<{ voice: string; lang: string }> {
    try {
      const s = await settings.get(projectId);
      if (s.defaultVoice && s.defaultLang) return { voice: s.defaultVoice, lang: s.defaultLang };
    } catch (err) {
      log.warn({ err, projectId }, "project settings unavailable; using the default voice");
    }
    return v.defaultVoice();
  }

  const pages: PageFetches = createPageQueue(
    (id) => fetchArticlePage({ store, content: admission.content, emit, log, admit: (aid, rev) => admission.admit(aid, rev), fetchOptions: deps.recrawlFetch }, id),
    deps.pageFetches,
  );
  deps.onPages?.(pages);

  const found = (a: StoredArticle | null, what: string) => {
    if (!a) throw notFound(what);
    return { article: toProto(a) };
  };

  const audioFiles = deps.audioFiles;

  return { deps, audioFiles, store, log, settings, emit, toProto, publisher, internal, publishJob, admission, admitNow, refundUnused, projectDefaultVoice, requestAudio, found, pages };
}
