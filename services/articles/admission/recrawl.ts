// Recrawl: fetch the article's URL again (through safeFetch: public http(s)
// addresses only, HTML only, bounded size and time), extract the main text
// and re-audify only when it differs from what was spoken. The article shows
// `recrawling` meanwhile and gets its previous status back when nothing changed.
import { Code, ConnectError } from "@connectrpc/connect";
import type { Logger } from "../../../lib/log.js";
import { decodeBody } from "../../../lib/net/text-body.js";
import { FetchLimitError, safeFetch, UnsafeUrlError, type SafeFetchOptions } from "../../../lib/net/safe-fetch.js";
import { ContentBusyError, ContentRejectedError } from "../content/limits.js";
import type { StatusEmitter } from "../events/publish.js";
import type { ArticleStatus, ArticleStore, StoredArticle } from "../store/port.js";
import { spokenTextOf, type Admission } from "./admit.js";
import type { ProjectSettingsSource } from "./settings.js";

export interface RecrawlDeps {
  store: ArticleStore;
  admission: Pick<Admission, "admit" | "content">;
  settings: ProjectSettingsSource;
  emit: StatusEmitter;
  log: Logger;
  fetchOptions?: SafeFetchOptions;
}

export interface RecrawlResult {
  changed: boolean;
  article: StoredArticle;
}

/** How a publisher's page is fetched (recrawl, create from a URL): HTML only, bounded in time and size. */
export const PAGE_FETCH_OPTIONS: SafeFetchOptions = { timeoutMs: 15_000, maxBytes: 5 * 1024 * 1024, accept: ["text/html", "application/xhtml+xml"] };

/** Statuses a periodic recrawl may start from: nothing is in flight for them. */
export const RECRAWLABLE: readonly ArticleStatus[] = ["ready", "errored", "rejected"];

const sameText = (a: string, b: string) => a.replace(/\s+/g, " ").trim() === b.replace(/\s+/g, " ").trim();

/** What the current revision speaks; parsed again (off the loop) only if admission never recorded it. */
async function spokenBefore(deps: RecrawlDeps, a: StoredArticle): Promise<string> {
  if (!a.parse || a.crawledText !== undefined || a.spokenText !== undefined) return spokenTextOf(a);
  return deps.admission.content.extract(a.projectId, a.text, a.url).catch(() => a.text);
}

export async function recrawlArticle(deps: RecrawlDeps, projectId: string, id: string): Promise<RecrawlResult> {
  const { store, log } = deps;
  const a = await store.get(projectId, id);
  if (!a) throw new ConnectError(`Article '${id}' not found in project '${projectId}'`, Code.NotFound);
  if (a.status === "deleted") throw new ConnectError(`Article '${id}' is deleted`, Code.FailedPrecondition);
  if (a.status === "recrawling") throw new ConnectError(`Article '${id}' is already being recrawled`, Code.Aborted);
  if (!a.url) throw new ConnectError(`Article '${id}' has no url to recrawl`, Code.FailedPrecondition);

  const started = await store.startRecrawl(a.id, a.revision, a.status);
  if (!started) throw new ConnectError(`Article '${id}' changed meanwhile; try again`, Code.Aborted);
  deps.emit(started);

  const restore = async () => {
    const back = await store.endRecrawl(a.id, a.revision);
    if (back) deps.emit(back);
    return back ?? a;
  };

  let text: string;
  try {
    const res = await safeFetch(a.url, { ...PAGE_FETCH_OPTIONS, ...deps.fetchOptions });
    if (res.status !== 200) throw new FetchLimitError(`the page answered HTTP ${res.status}`, "content_type");
    // Off the event loop and under the same limits as admission (content/pool.ts).
    text = await deps.admission.content.extract(projectId, decodeBody(res.body, res.headers.get("content-type")), res.url);
  } catch (err) {
    await restore();
    log.warn({ articleId: a.id, projectId, err: err instanceof Error ? err.message : String(err) }, "recrawl failed");
    if (err instanceof ContentBusyError) throw new ConnectError(`Recrawl of '${id}' failed: content extraction is busy; try again later`, Code.Unavailable);
    const why =
      err instanceof UnsafeUrlError || err instanceof FetchLimitError ? err.message : err instanceof ContentRejectedError ? err.reason : "the page could not be fetched";
    throw new ConnectError(`Recrawl of '${id}' failed: ${why}`, Code.FailedPrecondition);
  }

  if (text.trim() === "" || sameText(text, await spokenBefore(deps, a))) {
    log.info({ articleId: a.id, projectId }, "recrawl: content unchanged");
    return { changed: false, article: await restore() };
  }
  const next = await store.recrawled(a.id, a.revision, text);
  if (!next) throw new ConnectError(`Article '${id}' changed meanwhile; try again`, Code.Aborted);
  deps.emit(next);
  log.info({ articleId: a.id, projectId, revision: next.revision, chars: text.length }, "recrawl: content changed, re-audifying");
  const admitted = await deps.admission.admit(next.id, next.revision);
  return { changed: true, article: admitted ?? next };
}

/**
 * One pass of the optional per-project periodic recrawl; returns how many articles were recrawled.
 * Reads no article unless a project has recrawl on, and then only that project's recent ones
 * (its listing index, newest first, down to the start of its window).
 */
export async function periodicRecrawl(deps: RecrawlDeps, now = Date.now(), maxAgeHoursCap = 720): Promise<number> {
  let done = 0;
  for (const projectId of (await deps.settings.projects?.()) ?? []) {
    const s = await deps.settings.get(projectId).catch(() => undefined);
    if (!s?.recrawl.enabled) continue;
    const since = Math.floor(now / 1000) - Math.min(s.recrawl.maxAgeHours, maxAgeHoursCap) * 3600;
    let after: { id: string; key: number } | undefined;
    for (;;) {
      const page = await deps.store.findRecrawlCandidates(projectId, since, { after, limit: 500 });
      for (const c of page) {
        if (!RECRAWLABLE.includes(c.status)) continue;
        if ((c.crawledAt ?? c.added * 1000) > now - s.recrawl.everyMinutes * 60_000) continue;
        try {
          await recrawlArticle(deps, c.projectId, c.id);
          done++;
        } catch {
          // Logged inside; the next pass tries again.
        }
      }
      if (page.length < 500) break;
      after = { id: page[page.length - 1].id, key: page[page.length - 1].added };
    }
  }
  return done;
}
