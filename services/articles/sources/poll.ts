// One poll of one source, by the replica that holds its lease: a conditional
// GET of the feed (a 304 costs no parsing), the feed parsed in a content
// thread, then at most `itemsPerPoll` new or edited items turned into
// articles through the same create and update a publisher's call takes.
// Answers the source's new state; it never throws for a feed's fault.
import { decodeBody } from "../../../lib/net/text-body.js";
import { Code, ConnectError } from "@connectrpc/connect";
import { create } from "@bufbuild/protobuf";
import { CreateArticleRequestSchema } from "../../../gen/articles/v1/articles_pb.js";
import type { Logger } from "../../../lib/log.js";
import { FetchLimitError, safeFetch, UnsafeUrlError, type SafeFetchOptions } from "../../../lib/net/safe-fetch.js";
import { ContentBusyError, ContentRejectedError } from "../content/limits.js";
import type { ContentWork } from "../content/pool.js";
import { EXISTING_ID_KEY } from "../handlers/context.js";
import type { CreateFromPage } from "../handlers/context.js";
import type { CreateArticle } from "../handlers/create.js";
import type { ArticlePatch } from "../store/port.js";
import * as v from "../validate.js";
import type { StoredArticle } from "../store/port.js";
import { externalIdOf, fingerprint, firstPollCut, isNew, keyHash, needsPage, newestFirst } from "./items.js";
import type { FeedItem } from "./parse-feed.js";
import { localesOf } from "../content/page-meta.js";
import { voiceForPage } from "../pages/fetch-page.js";
import type { SourceDoc } from "./port.js";
import type { SourceStore } from "./port.js";

export interface SourceLimits {
  /** Articles created or updated by one poll; the rest wait for the next. */
  itemsPerPoll: number;
  /** Items of a feed looked at (newest first); a longer feed's older items are never read. */
  itemsConsidered: number;
  /** Most feed bytes read. */
  maxFeedBytes: number;
  /** Longest wait between polls of a failing source (before Retry-After). */
  maxBackoffMs: number;
  feedTimeoutMs: number;
  /** Sitemaps of a sitemap index read per poll (the newest by lastmod). */
  sitemapsPerPoll: number;
}

export const DEFAULT_SOURCE_LIMITS: SourceLimits = {
  itemsPerPoll: 20,
  itemsConsidered: 1_000,
  maxFeedBytes: 10 * 1024 * 1024,
  maxBackoffMs: 6 * 3_600_000,
  feedTimeoutMs: 15_000,
  sitemapsPerPoll: 10,
};

/** Retry-After is honoured up to a day; a longer one is a misconfigured server. */
const MAX_RETRY_AFTER_MS = 86_400_000;
/** A backlog (items over the per-poll bound) is worked off at this pace. */
const BACKLOG_EVERY_MS = 60_000;

/** The writes a poll makes: a publisher's create, create from a URL and update, with their checks, limits and credit. */
export interface SourceWrites {
  create: CreateArticle;
  createFromPage: CreateFromPage;
  /** A new revision of the article with `patch`; answers its id. */
  update(projectId: string, id: string, patch: ArticlePatch): Promise<string>;
}

export interface PollDeps {
  store: SourceStore;
  content: Pick<ContentWork, "parseFeed">;
  writes: SourceWrites;
  /** The article an item made, to tell whether an edit changes what is spoken. */
  article(projectId: string, id: string): Promise<StoredArticle | null>;
  /** Reads an article's page again; re-renders it only when its text changed (admission/recrawl.ts). */
  recrawl(projectId: string, id: string): Promise<{ changed: boolean }>;
  /** The project's default voice and lang: who reads an item in the language its feed declares (voiceForPage). */
  defaultVoice(projectId: string): Promise<{ voice: string; lang: string }>;
  fetchOptions?: SafeFetchOptions;
  limits: SourceLimits;
  log: Logger;
}

/** A failed poll: `message` is shown as the source's error. */
class PollError extends Error {
  constructor(
    message: string,
    readonly retryAfterMs?: number,
  ) {
    super(message);
  }
}

export function retryAfterMs(header: string | null, now: number): number | undefined {
  if (!header) return undefined;
  const seconds = /^\s*(\d+)\s*$/.exec(header)?.[1];
  const ms = seconds !== undefined ? Number(seconds) * 1000 : Date.parse(header) - now;
  return Number.isFinite(ms) && ms > 0 ? Math.min(ms, MAX_RETRY_AFTER_MS) : undefined;
}

/** Exponential in the failures in a row, from the poll period up to the cap; a longer Retry-After wins. */
export function backoffMs(pollSeconds: number, failures: number, maxBackoffMs: number, retryAfter?: number): number {
  const base = pollSeconds * 1000;
  const wait = Math.min(base * 2 ** Math.min(failures, 20), Math.max(base, maxBackoffMs));
  return Math.max(wait, retryAfter ?? 0);
}

function why(err: unknown): string {
  if (err instanceof PollError || err instanceof UnsafeUrlError || err instanceof FetchLimitError) return err.message;
  if (err instanceof ContentRejectedError) return err.reason;
  if (err instanceof ContentBusyError) return "feed parsing is busy; the next poll tries again";
  if (err instanceof ConnectError) return err.rawMessage;
  return "the feed could not be fetched";
}

const FEED_ACCEPT = "application/rss+xml, application/atom+xml, application/feed+json, application/xml;q=0.9, text/xml;q=0.9, */*;q=0.5";

async function fetchFeed(src: SourceDoc, deps: PollDeps, now: number) {
  const headers: Record<string, string> = { accept: FEED_ACCEPT };
  // A backlog must see the whole feed again, not a 304.
  if (!src.backlog) {
    if (src.etag) headers["if-none-match"] = src.etag;
    if (src.lastModified) headers["if-modified-since"] = src.lastModified;
  }
  const res = await safeFetch(src.url, { timeoutMs: deps.limits.feedTimeoutMs, maxBytes: deps.limits.maxFeedBytes, headers, ...deps.fetchOptions });
  if (res.status === 304) return { res, unchanged: true as const };
  if (res.status !== 200) throw new PollError(`the feed answered HTTP ${res.status}`, retryAfterMs(res.headers.get("retry-after"), now));
  return { res, unchanged: false as const };
}

/** Polls `src` (its lease held); answers what to write back with the lease's release. */
export async function pollSource(deps: PollDeps, src: SourceDoc, now = Date.now()): Promise<Partial<SourceDoc>> {
  const { log } = deps;
  try {
    const { res, unchanged } = await fetchFeed(src, deps, now);
    const ok = { lastPoll: now, lastSuccess: now, failures: 0, error: "" };
    if (unchanged) return { ...ok, nextPoll: now + src.pollSeconds * 1000 };

    const feed = await deps.content.parseFeed(src.projectId, decodeBody(res.body, res.headers.get("content-type")), {
      kind: src.kind,
      maxItems: deps.limits.itemsConsidered,
      url: res.url,
    });
    const index = feed.sitemaps?.length ? await indexItems(deps, src, feed.sitemaps) : undefined;
    const items = newestFirst(index?.items ?? feed.items);
    const cut = src.primed ? { since: src.since, baseline: src.baseline ?? [] } : firstPollCut(items, src.since, src.backfill);
    const outcome = await importItems(deps, src, items, cut.since, new Set(cut.baseline));
    const seen = index?.total ?? feed.total;
    log.info({ sourceId: src._id, projectId: src.projectId, items: seen, ...(index ? { sitemaps: index.read } : {}), ...outcome.counts }, "source polled");
    return {
      ...ok,
      nextPoll: now + (outcome.backlog ? Math.min(BACKLOG_EVERY_MS, src.pollSeconds * 1000) : src.pollSeconds * 1000),
      detected: feed.kind,
      etag: res.headers.get("etag") ?? "",
      lastModified: res.headers.get("last-modified") ?? "",
      seen,
      created: src.created + outcome.counts.created,
      updated: src.updated + outcome.counts.updated,
      backlog: outcome.backlog,
      // An item (or an index's sitemap) that failed is tried again next poll; the source shows why meanwhile.
      error: outcome.itemError ?? index?.error ?? "",
      ...(src.primed ? {} : { primed: true, since: cut.since, baseline: cut.baseline }),
    };
  } catch (err) {
    const failures = src.failures + 1;
    const message = why(err);
    const wait = backoffMs(src.pollSeconds, failures, deps.limits.maxBackoffMs, err instanceof PollError ? err.retryAfterMs : undefined);
    log.warn({ sourceId: src._id, projectId: src.projectId, failures, error: message, retryInMs: wait }, "source poll failed");
    return { lastPoll: now, failures, error: message, nextPoll: now + wait };
  }
}

/**
 * The items of a sitemap index: those of its first `sitemapsPerPoll` sitemaps (newest first),
 * each fetched as the index was (the same address checks at every hop, bounds and timeout), with
 * at most `itemsConsidered` items in all. A sitemap that is an index again is not followed. One
 * that fails is named in `error` while the others are imported; all failing fails the poll.
 */
async function indexItems(deps: PollDeps, src: SourceDoc, sitemaps: string[]): Promise<{ items: FeedItem[]; total: number; read: number; error?: string }> {
  const { limits } = deps;
  const items = new Map<string, FeedItem>();
  let total = 0;
  let read = 0;
  let error: string | undefined;
  for (const url of sitemaps.slice(0, limits.sitemapsPerPoll)) {
    if (items.size >= limits.itemsConsidered) break;
    try {
      const res = await safeFetch(url, { timeoutMs: limits.feedTimeoutMs, maxBytes: limits.maxFeedBytes, headers: { accept: FEED_ACCEPT }, ...deps.fetchOptions });
      if (res.status !== 200) throw new PollError(`the sitemap answered HTTP ${res.status}`);
      const map = await deps.content.parseFeed(src.projectId, decodeBody(res.body, res.headers.get("content-type")), { kind: "sitemap", maxItems: limits.itemsConsidered - items.size, url: res.url });
      // A page listed in two sitemaps is one item.
      for (const item of map.items) if (!items.has(item.key)) items.set(item.key, item);
      total += map.total;
      read++;
    } catch (err) {
      error ??= `sitemap ${url}: ${why(err)}`;
    }
  }
  if (read === 0 && error !== undefined) throw new PollError(error);
  return { items: [...items.values()], total, read, ...(error === undefined ? {} : { error }) };
}

interface ImportOutcome {
  counts: { created: number; updated: number; unchanged: number };
  backlog: boolean;
  itemError?: string;
}

async function importItems(deps: PollDeps, src: SourceDoc, items: FeedItem[], since: number, baseline: ReadonlySet<string>): Promise<ImportOutcome> {
  const known = await deps.store.items(src._id, items.map((i) => keyHash(i.key)));
  const counts = { created: 0, updated: 0, unchanged: 0 };
  let budget = deps.limits.itemsPerPoll;
  let backlog = false;
  let itemError: string | undefined;
  for (const item of items) {
    const hash = keyHash(item.key);
    const record = known.get(hash);
    const print = fingerprint(item);
    if (record ? record.hash === print : !isNew(item, since, baseline)) continue;
    if (budget === 0) {
      backlog = true;
      break;
    }
    budget--;
    try {
      const result = record ? await updateFromItem(deps, src, item, record.articleId) : await createFromItem(deps, src, item);
      counts[result.outcome]++;
      await deps.store.rememberItem({ _id: `${src._id}:${hash}`, sourceId: src._id, projectId: src.projectId, hash: print, articleId: result.articleId });
    } catch (err) {
      itemError ??= `item ${item.link ?? item.key}: ${why(err)}`;
      deps.log.warn({ sourceId: src._id, projectId: src.projectId, item: item.link ?? item.key, error: why(err) }, "source item not imported");
    }
  }
  return { counts, backlog, itemError };
}

const titleOf = (item: FeedItem) => (item.title ?? item.link ?? item.key).slice(0, 1_000);
/** The item's date as the article's `published` (lists and feeds order by it). */
const publishedOf = (item: FeedItem) => (item.published !== undefined ? { published: new Date(item.published).toISOString() } : {});

/**
 * Who reads an item's article: the source's own voice and lang; else, when the feed declares a
 * language a voice speaks (RSS `<language>`, Atom `xml:lang`, JSON Feed `language`, a news
 * sitemap's), the project's default voice in it, chosen as for a page's `<html lang>`; else
 * nothing is sent and the create decides (the page's language, or the text's, detected).
 */
async function voiceOfItem(deps: PollDeps, src: SourceDoc, item: FeedItem): Promise<{ voice?: string; lang?: string }> {
  if (src.voice && src.lang) return { voice: src.voice, lang: src.lang };
  if (localesOf(item.lang).length === 0) return {};
  return voiceForPage(await deps.defaultVoice(src.projectId), item.lang);
}

async function createFromItem(deps: PollDeps, src: SourceDoc, item: FeedItem) {
  const externalId = externalIdOf(item);
  const voice = await voiceOfItem(deps, src, item);
  try {
    if (needsPage(src, item)) {
      if (!item.link) throw new PollError("the item has no link to read its page from");
      // Read from its page in the background, within the page-fetch bounds (create from a URL).
      const articleId = await deps.writes.createFromPage(src.projectId, { url: item.link, ...(item.title ? { title: titleOf(item) } : {}), externalId, labels: src.labels, ...voice, ...publishedOf(item) });
      return { outcome: "created" as const, articleId };
    }
    const req = create(CreateArticleRequestSchema, { title: titleOf(item), text: item.content!, parse: true, url: item.link, externalId, labels: src.labels, ...voice, ...publishedOf(item) });
    return { outcome: "created" as const, articleId: await deps.writes.create(src.projectId, req) };
  } catch (err) {
    // Already an article (another source, the publisher, a poll whose record was lost): linked, not duplicated.
    const holder = err instanceof ConnectError && err.code === Code.AlreadyExists ? err.metadata.get(EXISTING_ID_KEY) : null;
    if (holder) return { outcome: "unchanged" as const, articleId: holder };
    throw err;
  }
}

async function updateFromItem(deps: PollDeps, src: SourceDoc, item: FeedItem, articleId: string) {
  const current = await deps.article(src.projectId, articleId);
  // Deleted by the publisher, or gone: left alone (docs/sources.md).
  if (!current || current.status === "deleted") return { outcome: "unchanged" as const, articleId };
  if (needsPage(src, item)) {
    // Its page is read again: a changed text re-renders, an unchanged one does not.
    const { changed } = await deps.recrawl(src.projectId, articleId);
    return { outcome: changed ? ("updated" as const) : ("unchanged" as const), articleId };
  }
  const title = titleOf(item);
  if (title === current.title && item.content === current.text) return { outcome: "unchanged" as const, articleId };
  const patch: ArticlePatch = { title: v.requiredText("title", title, v.LIMITS.title), text: v.requiredText("text", item.content!, v.LIMITS.text), url: v.optionalUrl(item.link), parse: true, ...publishedOf(item), admission: "pending" };
  await deps.writes.update(src.projectId, articleId, patch);
  return { outcome: "updated" as const, articleId };
}
