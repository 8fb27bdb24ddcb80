// Messages between the content pool and its worker threads (lib/threads/pool.ts adds the job id).
import type { AnalyseInput, Analysis, PageContent } from "./analyse.js";
import type { ParsedFeed, SourceKind } from "../sources/parse-feed.js";

export type ContentJob =
  | { kind: "analyse"; input: AnalyseInput }
  | { kind: "extract"; html: string; url?: string }
  | { kind: "page"; html: string; url?: string }
  | { kind: "feed"; body: string; feedKind?: SourceKind; maxItems: number; url?: string };

export type ContentResult = { analysis: Analysis } | { text: string } | { page: PageContent } | { feed: ParsedFeed };
