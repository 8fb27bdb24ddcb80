// Content work (HTML extraction, classification) runs in a small pool of
// worker threads (lib/threads/pool.ts), never on the service's event loop:
// one hostile page must not stall every other project's reads. Each job gets a
// hard time limit and a heap limit, and waiting jobs are taken from the
// projects in turn.
import { createThreadPool } from "../../../lib/threads/pool.js";
import type { AnalyseInput, Analysis, PageContent } from "./analyse.js";
import { explainContent } from "./classify.js";
import { CONTENT_LIMITS, ContentBusyError, ContentRejectedError, type ContentLimits } from "./limits.js";
import type { ContentJob, ContentResult } from "./protocol.js";
import type { ParsedFeed, SourceKind } from "../sources/parse-feed.js";

export interface ContentWork {
  /** What will be spoken and its content-type scores. Throws ContentRejectedError (final) or ContentBusyError (retry later). */
  analyse(projectId: string, input: AnalyseInput): Promise<Analysis>;
  /** The main text of a fetched page (recrawl). */
  extract(projectId: string, html: string, url?: string): Promise<string>;
  /** A fetched page's article with its title, date, language and canonical URL (create from a URL). */
  extractPage(projectId: string, html: string, url?: string): Promise<PageContent>;
  /** A fetched feed or sitemap as items (sources/parse-feed.ts), at most `maxItems` of them. Throws ContentRejectedError naming what is wrong with it. */
  parseFeed(projectId: string, body: string, opts: { kind?: SourceKind; maxItems: number; url?: string }): Promise<ParsedFeed>;
  /** Gets the threads' code ready now, so the first article pays only for starting a thread (a service calls this at start). */
  prepare(): void;
  close(): Promise<void>;
}

export function createContentPool(overrides: Partial<ContentLimits> = {}): ContentWork {
  const limits: ContentLimits = { ...CONTENT_LIMITS, ...overrides };
  const pool = createThreadPool<ContentJob, ContentResult>({
    ...limits,
    entry: new URL("./worker.ts", import.meta.url),
    workerData: { maxDepth: limits.maxDepth, maxOutputChars: limits.maxOutputChars },
    work: "content extraction",
    jobs: "content jobs",
    rejected: (reason) => new ContentRejectedError(reason),
    busy: (message) => new ContentBusyError(message),
  });

  return {
    async analyse(projectId, input) {
      // Plain text this short is classified faster than it can be handed to a thread and
      // back (~250 µs of this thread's CPU per round trip); its cost is bounded by its size.
      const spoken = input.crawledText ?? (input.parse ? undefined : input.text);
      if (spoken !== undefined && spoken.length + input.title.length <= limits.inlineChars) {
        return { spoken, scores: explainContent({ title: input.title, text: spoken, lang: input.lang }) };
      }
      return ((await pool.run(projectId, { kind: "analyse", input })) as { analysis: Analysis }).analysis;
    },
    async extract(projectId, html, url) {
      return ((await pool.run(projectId, { kind: "extract", html, url })) as { text: string }).text;
    },
    async extractPage(projectId, html, url) {
      return ((await pool.run(projectId, { kind: "page", html, url })) as { page: PageContent }).page;
    },
    async parseFeed(projectId, body, opts) {
      return ((await pool.run(projectId, { kind: "feed", body, feedKind: opts.kind, maxItems: opts.maxItems, url: opts.url })) as { feed: ParsedFeed }).feed;
    },
    prepare: () => pool.prepare(),
    close: () => pool.close(),
  };
}
