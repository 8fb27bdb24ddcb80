// Create from a URL, second half: the article was stored `recrawling` with its
// URL only; here its page is fetched (safeFetch: public http(s) addresses
// only, unless FETCH_ALLOW_PRIVATE lists the host), its article extracted in
// the content threads (Readability, under the content limits), and the
// article gets the page's title, text, language and canonical URL and goes on
// `parsed` to admission. A page that cannot be read ends the article
// `errored`, with why in words.
import http from "node:http";
import type { Logger } from "../../../lib/log.js";
import { FetchLimitError, safeFetch, UnsafeUrlError, type SafeFetchOptions } from "../../../lib/net/safe-fetch.js";
import { decodeBody } from "../../../lib/net/text-body.js";
import { normalizeHttpUrl } from "../../../lib/urls.js";
import { checkVoiceLang, DEFAULT_VOICE, VOICES } from "../../../lib/voices.js";
import { xmlText } from "../../../lib/xml-text.js";
import { PAGE_FETCH_OPTIONS } from "../admission/recrawl.js";
import type { PageContent } from "../content/analyse.js";
import { ContentBusyError, ContentRejectedError } from "../content/limits.js";
import { localesOf } from "../content/page-meta.js";
import type { ContentWork } from "../content/pool.js";
import type { StatusEmitter } from "../events/publish.js";
import { sortAtOf } from "../store/order.js";
import type { ArticleStore, PageFill, StoredArticle } from "../store/port.js";
import { LIMITS } from "../validate.js";
import { voiceForText, type VoiceChoice } from "../voice-choice.js";

export interface PageFetchDeps {
  store: ArticleStore;
  content: Pick<ContentWork, "extractPage">;
  emit: StatusEmitter;
  log: Logger;
  /** Admits the filled revision (admission/admit.ts); its failures leave it to the reconciler. */
  admit(id: string, revision: number): Promise<unknown>;
  /** FETCH_ALLOW_PRIVATE and tests' overrides. */
  fetchOptions?: SafeFetchOptions;
}

/** The article's page is unusable: the article ends errored with this message. */
export class PageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "PageError";
  }
}

const NETWORK_WORDS: Record<string, string> = {
  ECONNREFUSED: "the site refused the connection",
  ECONNRESET: "the site closed the connection",
  EHOSTUNREACH: "the site cannot be reached",
  ENETUNREACH: "the site cannot be reached",
  EPROTO: "the secure connection to the site failed",
  CERT_HAS_EXPIRED: "the site's certificate has expired",
  DEPTH_ZERO_SELF_SIGNED_CERT: "the site's certificate is not trusted",
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: "the site's certificate is not trusted",
  ERR_TLS_CERT_ALTNAME_INVALID: "the site's certificate is for another name",
};

/** Why a fetch failed, in words a publisher can act on. */
export function fetchFailureWords(err: unknown): string {
  if (err instanceof UnsafeUrlError) return `the page's address is not allowed: ${err.message}`;
  if (err instanceof FetchLimitError) return `the page could not be fetched: ${err.message}`;
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return `the page could not be fetched: ${(code && NETWORK_WORDS[code]) ?? (err instanceof Error ? err.message : String(err))}`;
}

/** Fetches and extracts the page at `url`; throws PageError (final) or ContentBusyError (try again later). */
export async function readPage(deps: Pick<PageFetchDeps, "content" | "fetchOptions">, projectId: string, url: string): Promise<PageContent & { finalUrl: string }> {
  let res;
  try {
    res = await safeFetch(url, { ...PAGE_FETCH_OPTIONS, ...deps.fetchOptions });
  } catch (err) {
    throw new PageError(fetchFailureWords(err));
  }
  if (res.status !== 200) throw new PageError(`the page answered ${res.status}${http.STATUS_CODES[res.status] ? ` ${http.STATUS_CODES[res.status]}` : ""}`);
  let page: PageContent;
  try {
    page = await deps.content.extractPage(projectId, decodeBody(res.body, res.headers.get("content-type")), res.url);
  } catch (err) {
    if (err instanceof ContentRejectedError) throw new PageError(`the page could not be read: ${err.reason}`);
    throw err;
  }
  if (page.text.trim() === "") throw new PageError("no article text found on the page");
  return { ...page, finalUrl: res.url };
}

/** The URL the article is known by: the page's canonical one, else where the fetch ended (after redirects). */
function urlOf(page: { meta: PageContent["meta"]; finalUrl: string }): string | undefined {
  for (const candidate of [page.meta.canonicalUrl, page.finalUrl]) {
    const normal = candidate === undefined ? null : normalizeHttpUrl(candidate);
    if (normal !== null && normal.length <= LIMITS.url) return normal;
  }
  return undefined;
}

function titleOf(page: PageContent, url: string): string {
  const title = xmlText(page.title ?? "").trim() || url;
  return title.length > LIMITS.title ? `${title.slice(0, LIMITS.title - 1).trimEnd()}…` : title;
}

/**
 * Who reads a page declared in `tag`: the article's voice (the project's default) in that language
 * when it speaks it, the platform's default voice when that does, else the first voice that does.
 * Unchanged when the page names no language, or one no voice speaks.
 */
export function voiceForPage(current: { voice: string; lang: string }, tag: string | undefined): { voice: string; lang: string } {
  const wanted = localesOf(tag);
  for (const voice of [current.voice, DEFAULT_VOICE]) {
    const lang = wanted.find((l) => checkVoiceLang(voice, l) === null);
    if (lang) return { voice, lang };
  }
  for (const lang of wanted) {
    const v = VOICES.find((x) => (x.langs as readonly string[]).includes(lang));
    if (v) return { voice: v.name, lang };
  }
  return current;
}

/**
 * Who reads the page: the voice sent with the URL; else the page's declared language
 * (voiceForPage); else the language its text is written in, detected as for any create without
 * a language (voice-choice.ts), with its warning when no voice speaks it.
 */
async function voiceOf(a: StoredArticle, title: string, text: string, declared: string | undefined, log: Logger): Promise<VoiceChoice> {
  if (a.pageKeeps?.includes("voice")) return { voice: a.voice, lang: a.lang };
  if (localesOf(declared).length > 0) return voiceForPage(a, declared);
  return voiceForText({ voice: a.voice, lang: a.lang }, title, text, false, log);
}

/** What the page gives the article, with what its creator gave kept (title, voice, a publication date). */
async function fillOf(a: StoredArticle, page: PageContent & { finalUrl: string }, log: Logger): Promise<PageFill> {
  const url = urlOf(page);
  const title = a.pageKeeps?.includes("title") ? a.title : titleOf(page, url ?? a.url ?? "");
  const text = xmlText(page.text);
  const { voice, lang, warning } = await voiceOf(a, title, text, page.meta.lang, log);
  // A date sent with the URL wins over the page's.
  const published = a.published === undefined ? page.meta.published : undefined;
  return {
    title,
    text,
    ...(url && url !== a.url ? { url } : {}),
    voice,
    lang,
    ...(warning ? { warning } : {}),
    ...(published ? { published, sortAt: sortAtOf(published, a.added, a.seq) } : {}),
  };
}

/**
 * Reads the page of an article stored with `pageFetch` and fills it in, or ends it errored.
 * Answers the article as it is afterwards; null when it was no longer waiting for its page
 * (updated, deleted, or filled by another run). A busy content pool leaves it waiting: the
 * reconciler tries again.
 */
export async function fetchArticlePage(deps: PageFetchDeps, id: string): Promise<StoredArticle | null> {
  const { store, log } = deps;
  const a = await store.getById(id);
  if (!a || a.pageFetch !== "pending" || a.status !== "recrawling" || !a.url) return null;
  let filled: StoredArticle | null;
  try {
    const page = await readPage(deps, a.projectId, a.url);
    filled = await store.pageFetched(a.id, a.revision, await fillOf(a, page, log));
    if (!filled) return null;
    log.info({ articleId: a.id, projectId: a.projectId, chars: filled.text.length, lang: filled.lang }, "article page fetched");
  } catch (err) {
    if (!(err instanceof PageError)) {
      if (!(err instanceof ContentBusyError)) log.warn({ err, articleId: a.id, projectId: a.projectId }, "page fetch failed; the reconciler tries again");
      return a;
    }
    log.info({ articleId: a.id, projectId: a.projectId, error: err.message }, "article page unusable");
    const failed = await store.pageFetchFailed(a.id, a.revision, err.message);
    if (failed) deps.emit(failed);
    return failed;
  }
  deps.emit(filled);
  // Audio on demand: it waits, parsed, until someone asks for its audio.
  if (filled.parked) return filled;
  try {
    await deps.admit(filled.id, filled.revision);
  } catch (err) {
    log.warn({ err, articleId: filled.id }, "admission postponed to the reconciler");
  }
  return (await store.getById(id)) ?? filled;
}
