// HTML → plain paragraphs. Page furniture (navigation, scripts, captions,
// forms) is dropped; every block element ends a paragraph.
import { convert, type FormatCallback, type HtmlToTextOptions, type SelectorDefinition } from "html-to-text";
import { headingLevelOf, type HeadingLevel } from "../../../lib/headings.js";
import { HEADING_MARKS } from "./pronounce.js";

const DROPPED = ["script", "style", "noscript", "nav", "header", "footer", "aside", "form", "iframe", "figcaption", "button", "template", "svg", "canvas", "video", "audio", "picture", "img", "select", "textarea", "input", "object", "embed", "head", "title"];

const BLOCKS = ["p", "div", "section", "article", "main", "blockquote", "pre", "li", "ul", "ol", "dl", "dt", "dd", "h1", "h2", "h3", "h4", "h5", "h6", "table", "tr", "figure", "address", "details", "summary", "hr"];

const selectors: SelectorDefinition[] = [
  ...DROPPED.map((selector) => ({ selector, format: "skip" })),
  ...BLOCKS.map((selector) => ({ selector, format: "block", options: { leadingLineBreaks: 2, trailingLineBreaks: 2 } })),
  // Table cells read as separate lines; running them together would merge words.
  { selector: "td", format: "block", options: { leadingLineBreaks: 1, trailingLineBreaks: 1 } },
  { selector: "th", format: "block", options: { leadingLineBreaks: 1, trailingLineBreaks: 1 } },
  { selector: "a", options: { ignoreHref: true } },
  // Sections of the article: their paragraphs carry a mark, read by htmlBlocks.
  { selector: "h2", format: "markedBlock", options: { leadingLineBreaks: 2, trailingLineBreaks: 2, mark: HEADING_MARKS[2] } },
  { selector: "h3", format: "markedBlock", options: { leadingLineBreaks: 2, trailingLineBreaks: 2, mark: HEADING_MARKS[3] } },
];

const markedBlock: FormatCallback = (elem, walk, builder, formatOptions) => {
  builder.openBlock({ leadingLineBreaks: formatOptions.leadingLineBreaks ?? 2 });
  builder.addInline(String(formatOptions.mark ?? ""));
  walk(elem.children, builder);
  builder.closeBlock({ trailingLineBreaks: formatOptions.trailingLineBreaks ?? 2 });
};

const options: HtmlToTextOptions = {
  wordwrap: false,
  decodeEntities: true,
  selectors,
  formatters: { markedBlock },
};

/** Paragraphs of the visible text; line breaks (<br>) also separate paragraphs. */
export function htmlToParagraphs(html: string): string[] {
  return htmlBlocks(html).map((b) => b.text);
}

/** htmlToParagraphs, telling which paragraphs were section headings (h2, h3). */
export function htmlBlocks(html: string): Array<{ text: string; heading?: HeadingLevel }> {
  return splitParagraphs(convert(html, options), true).flatMap((line) => {
    const heading = line.startsWith(HEADING_MARKS[2]) ? 2 : line.startsWith(HEADING_MARKS[3]) ? 3 : undefined;
    const text = heading ? line.slice(1).trim() : line;
    if (text.length === 0) return [];
    return [heading ? { text, heading } : { text }];
  });
}

/**
 * Plain text → paragraphs: blank lines separate them; when the text has none,
 * each line is a paragraph.
 */
export function splitParagraphs(text: string, everyLine = false): string[] {
  return rawParagraphs(text, everyLine)
    .map((p) => p.trim())
    .filter((p) => p.length > 0);
}

/**
 * splitParagraphs, telling which paragraphs extraction marked as headings (lib/headings.ts): the
 * articles service hands over an HTML article's extracted text as plain text with those marks, and
 * only extraction makes them (a publisher's plain text has them turned to spaces before it comes).
 */
export function plainBlocks(text: string): Array<{ text: string; heading?: HeadingLevel }> {
  return rawParagraphs(text, false).flatMap((raw) => {
    const p = raw.trim();
    if (p.length === 0) return [];
    const heading = headingLevelOf(raw);
    return [heading ? { text: p, heading } : { text: p }];
  });
}

function rawParagraphs(text: string, everyLine: boolean): string[] {
  const normalised = text.replace(/\r\n?/g, "\n");
  return everyLine || !/\n[^\S\n]*\n/.test(normalised) ? normalised.split("\n") : normalised.split(/\n[^\S\n]*\n/);
}
