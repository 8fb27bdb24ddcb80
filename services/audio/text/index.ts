// Text preparation: what the speech engine will read, as paragraphs with the
// title first.
import { expandAbbreviations } from "./abbreviations.js";
import { htmlBlocks, plainBlocks } from "./html.js";
import { splitSentences } from "./sentences.js";
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

/**
 * One paragraph (index 0 is the title) as sentences: what the engine reads and, beside it, what
 * the listener reads along (the article's own words: the timed segments and transcripts show
 * these). Sentences are split before normalisation, so each spoken sentence is the reading of
 * exactly one shown sentence.
 */
export interface PreparedParagraph {
  spoken: string[];
  shown: string[];
  /** The article's title (the first paragraph, unless the title had nothing to read). */
  title?: true;
  /** An HTML h2/h3 (parsed articles): it starts a chapter. */
  heading?: 2 | 3;
}

export function prepareSentences(input: TextInput): PreparedParagraph[] {
  // The characters the pipeline marks with can only come from the pipeline (pronounce.ts): they
  // go before anything else, and again after HTML, whose character references can spell them.
  const html = (s: string) => htmlBlocks(withoutReserved(s)).map((b) => ({ ...b, text: withoutReserved(b.text) }));
  const body = input.parse ? html(input.text) : plainBlocks(withoutReserved(input.text));
  const title = input.parse ? html(input.title).map((b) => b.text).join(" ") : withoutReserved(input.title).trim();
  const rules = input.pronunciations && rulesWithoutReserved(input.pronunciations);
  const out: PreparedParagraph[] = [];
  for (const block of [{ text: title, heading: undefined, title: true }, ...body]) {
    const shown: string[] = [];
    const spoken: string[] = [];
    for (const sentence of splitSentences(cleanWhitespace(block.text), input.lang)) {
      // Rules apply before normalisation, to the words as the publisher wrote them.
      const marked = rules?.length ? markPronunciations(sentence, rules, input.lang) : sentence;
      const said = input.isRaw ? cleanWhitespace(marked) : normalizeParagraph(marked, input.lang);
      if (said.length === 0) continue;
      shown.push(sentence);
      spoken.push(said);
    }
    if (spoken.length === 0) continue;
    const paragraph: PreparedParagraph = { spoken, shown };
    if ("title" in block) paragraph.title = true;
    if (block.heading) paragraph.heading = block.heading;
    out.push(paragraph);
  }
  return out;
}

/** The paragraphs to speak, title first, each as one string. */
export function prepareText(input: TextInput): string[] {
  return prepareSentences(input).map((p) => p.spoken.join(" "));
}
