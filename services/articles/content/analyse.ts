// The content work of one article, as it runs inside a content worker thread:
// a linear pre-scan of the HTML's nesting (the DOM and Readability cost grows
// with the cube of the depth, and recurse), then extraction and
// classification. Pure and synchronous; pool.ts adds the time and memory limits.
import { Parser } from "htmlparser2";
import { explainContent, type TypeExplanation } from "./classify.js";
import { extractMainContent, extractPage, type ExtractedPage } from "./extract.js";
import { ContentRejectedError, depthReason, outputReason } from "./limits.js";

export interface AnalyseInput {
  title: string;
  /** The article text as sent: HTML when `parse`. */
  text: string;
  lang: string;
  parse: boolean;
  url?: string;
  /** Text from a recrawl: spoken as it is, never parsed again. */
  crawledText?: string;
}

export interface Analysis {
  /** What will be spoken. */
  spoken: string;
  scores: TypeExplanation[];
}

export interface Limits {
  maxDepth: number;
  maxOutputChars: number;
}

/** The deepest element nesting the HTML parser builds; stops counting once past `limit`. */
export function htmlDepth(html: string, limit = Infinity): number {
  let depth = 0;
  let max = 0;
  // htmlparser2 is the tokenizer linkedom builds its tree with, so its open/close events
  // (implied ends of <p>, <li>, <td> … included) are the tree's real nesting, in linear time.
  const parser = new Parser({
    onopentag() {
      depth++;
      if (depth > max) {
        max = depth;
        if (max > limit) parser.pause();
      }
    },
    onclosetag() {
      depth--;
    },
  });
  parser.end(html);
  return max;
}

/** Extracts the main text of a page, refusing pages nested deeper than allowed. */
export function extractLimited(html: string, url: string | undefined, limits: Limits): string {
  if (htmlDepth(html, limits.maxDepth) > limits.maxDepth) throw new ContentRejectedError(depthReason(limits.maxDepth));
  const text = extractMainContent(html, url).text;
  if (text.length > limits.maxOutputChars) throw new ContentRejectedError(outputReason(limits.maxOutputChars));
  return text;
}

/** A fetched page's article and metadata (create from a URL), under the same limits as extractLimited. */
export function extractPageLimited(html: string, url: string | undefined, limits: Limits): PageContent {
  if (htmlDepth(html, limits.maxDepth) > limits.maxDepth) throw new ContentRejectedError(depthReason(limits.maxDepth));
  const { title, text, meta } = extractPage(html, url);
  if (text.length > limits.maxOutputChars) throw new ContentRejectedError(outputReason(limits.maxOutputChars));
  return { ...(title ? { title } : {}), text, meta };
}

/** What crosses back from the worker thread: the paragraphs stay behind (the text holds them). */
export type PageContent = Pick<ExtractedPage, "title" | "text" | "meta">;

export function analyse(input: AnalyseInput, limits: Limits): Analysis {
  const spoken = input.crawledText ?? (input.parse ? extractLimited(input.text, input.url, limits) : input.text);
  return { spoken, scores: explainContent({ title: input.title, text: spoken, lang: input.lang }) };
}
