// HTML → plain paragraphs. Page furniture (navigation, scripts, captions,
// forms) is dropped; every block element ends a paragraph.
import { convert, type HtmlToTextOptions, type SelectorDefinition } from "html-to-text";

const DROPPED = ["script", "style", "noscript", "nav", "header", "footer", "aside", "form", "iframe", "figcaption", "button", "template", "svg", "canvas", "video", "audio", "picture", "img", "select", "textarea", "input", "object", "embed", "head", "title"];

const BLOCKS = ["p", "div", "section", "article", "main", "blockquote", "pre", "li", "ul", "ol", "dl", "dt", "dd", "h1", "h2", "h3", "h4", "h5", "h6", "table", "tr", "figure", "address", "details", "summary", "hr"];

const selectors: SelectorDefinition[] = [
  ...DROPPED.map((selector) => ({ selector, format: "skip" })),
  ...BLOCKS.map((selector) => ({ selector, format: "block", options: { leadingLineBreaks: 2, trailingLineBreaks: 2 } })),
  // Table cells read as separate lines; running them together would merge words.
  { selector: "td", format: "block", options: { leadingLineBreaks: 1, trailingLineBreaks: 1 } },
  { selector: "th", format: "block", options: { leadingLineBreaks: 1, trailingLineBreaks: 1 } },
  { selector: "a", options: { ignoreHref: true } },
];

const options: HtmlToTextOptions = {
  wordwrap: false,
  decodeEntities: true,
  selectors,
};

/** Paragraphs of the visible text; line breaks (<br>) also separate paragraphs. */
export function htmlToParagraphs(html: string): string[] {
  return splitParagraphs(convert(html, options), true);
}

/**
 * Plain text → paragraphs: blank lines separate them; when the text has none,
 * each line is a paragraph.
 */
export function splitParagraphs(text: string, everyLine = false): string[] {
  const normalised = text.replace(/\r\n?/g, "\n");
  const byBlank = everyLine || !/\n[^\S\n]*\n/.test(normalised) ? normalised.split("\n") : normalised.split(/\n[^\S\n]*\n/);
  return byBlank.map((p) => p.trim()).filter((p) => p.length > 0);
}
