// Text preparation: what the speech engine will read, as paragraphs with the
// title first.
import { expandAbbreviations } from "./abbreviations.js";
import { htmlToParagraphs, splitParagraphs } from "./html.js";
import { spellEnglishInitialisms, spellInitialisms } from "./initialisms.js";
import { langKey } from "./lang.js";
import { markPronunciations, rulesWithoutReserved, withoutReserved, type PronunciationRule } from "./pronounce.js";
import { readNumbers } from "./numbers.js";
import { readRomanNumerals } from "./roman.js";
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
  /** Read as written: no normalisation beyond splitting into paragraphs and collapsing whitespace. */
  isRaw?: boolean;
  /** The project's pronunciation rules: their matches become marks the providers render (pronounce.ts). */
  pronunciations?: readonly PronunciationRule[];
}

/** Invisible characters, and spaces collapsed to one. */
function cleanWhitespace(text: string): string {
  return text.replace(/[\u200B-\u200D\uFEFF\u00AD]/g, "").replace(/\s+/g, " ").trim();
}

/**
 * Normalises one paragraph for speech. Order matters: addresses hold dots and
 * digits, and abbreviations ("Nr.", "Mio.") decide how numbers are read.
 */
export function normalizeParagraph(text: string, lang: string): string {
  // Thin and no-break spaces group digits ("10 000"); they would look like two numbers once collapsed.
  let s = cleanWhitespace(text.replace(/(?<=\d)[\u00A0\u202F\u2009](?=\d{3}(?!\d))/g, langKey(lang) === "de" ? "." : ","));
  s = readUrls(s, lang);
  s = expandAbbreviations(s, lang);
  s = readRomanNumerals(s, langKey(lang));
  s = readNumbers(s, lang);
  s = langKey(lang) === "de" ? spellInitialisms(s) : spellEnglishInitialisms(s);
  s = s.replace(/\s&\s/g, langKey(lang) === "de" ? " und " : " and ");
  return cleanWhitespace(s);
}

export function prepareText(input: TextInput): string[] {
  // The characters the pipeline marks with can only come from the pipeline (pronounce.ts): they
  // go before anything else, and again after HTML, whose character references can spell them.
  const html = (s: string) => htmlToParagraphs(withoutReserved(s)).map(withoutReserved);
  const body = input.parse ? html(input.text) : splitParagraphs(withoutReserved(input.text));
  const title = input.parse ? html(input.title).join(" ") : withoutReserved(input.title).trim();
  const rules = input.pronunciations && rulesWithoutReserved(input.pronunciations);
  // Rules apply before normalisation, to the words as the publisher wrote them.
  const paragraphs = [title, ...body].filter((p) => p.trim().length > 0).map((p) => (rules?.length ? markPronunciations(cleanWhitespace(p), rules, input.lang) : p));
  if (input.isRaw) return paragraphs.map(cleanWhitespace).filter((p) => p.length > 0);
  return paragraphs.map((p) => normalizeParagraph(p, input.lang)).filter((p) => p.length > 0);
}
