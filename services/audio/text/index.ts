// Text preparation: what the speech engine will read, as paragraphs with the
// title first.
import { expandAbbreviations } from "./abbreviations.js";
import { htmlToParagraphs, splitParagraphs } from "./html.js";
import { readNumbers } from "./numbers.js";
import { readUrls } from "./urls.js";

export { splitSentences } from "./sentences.js";
export { packChunks, type TextChunk } from "./chunks.js";
export { htmlToParagraphs } from "./html.js";

export interface TextInput {
  title: string;
  text: string;
  lang: string;
  /** The text is HTML to strip. */
  parse?: boolean;
  /** Read as written: no normalisation beyond splitting into paragraphs. */
  isRaw?: boolean;
}

/** Normalises one paragraph for speech. Order matters: URLs hold dots and digits. */
export function normalizeParagraph(text: string, lang: string): string {
  let s = text.replace(/[\u200B-\u200D\uFEFF\u00AD]/g, "").replace(/\s+/g, " ").trim();
  s = readUrls(s, lang);
  s = expandAbbreviations(s, lang);
  s = readNumbers(s, lang);
  return s.replace(/\s+/g, " ").trim();
}

export function prepareText(input: TextInput): string[] {
  const body = input.parse ? htmlToParagraphs(input.text) : splitParagraphs(input.text);
  const title = input.parse ? htmlToParagraphs(input.title).join(" ") : input.title.trim();
  const paragraphs = [title, ...body].filter((p) => p.trim().length > 0);
  if (input.isRaw) return paragraphs.map((p) => p.trim());
  return paragraphs.map((p) => normalizeParagraph(p, input.lang)).filter((p) => p.length > 0);
}
