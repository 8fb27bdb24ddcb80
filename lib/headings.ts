// Section headings in extracted text. The articles service extracts the text
// of an article sent as HTML (admission, recrawl) and stores it as plain
// paragraphs; the audio service speaks that text later, as plain text. A
// heading paragraph keeps its level in its first character: an EN SPACE for
// h2, an EM SPACE for h3. Whitespace on purpose: every other reader of the
// stored text (openings, the recrawl's comparison, classification, rules)
// trims or collapses whitespace, so to them the text is what it was before.
//
// Only extraction may write them: it collapses every other whitespace to
// single spaces, and the articles service turns these two characters into
// plain spaces in a publisher's own plain text before the audio service
// reads it (services/articles/handlers/worker.ts), which changes nothing
// spoken or shown, since both collapse whitespace.

export type HeadingLevel = 2 | 3;

export const HEADING_MARKS: Readonly<Record<HeadingLevel, string>> = { 2: "\u2002", 3: "\u2003" };

const MARKED = /^[\n\r\t ]*([\u2002\u2003])/;

/** A paragraph of extracted text as a heading of `level`. */
export const markHeading = (text: string, level: HeadingLevel) => `${HEADING_MARKS[level]}${text}`;

/** The heading level a paragraph (as split from the text, before trimming) was marked with, if any. */
export function headingLevelOf(paragraph: string): HeadingLevel | undefined {
  const m = MARKED.exec(paragraph);
  return m ? (m[1] === HEADING_MARKS[2] ? 2 : 3) : undefined;
}

/** A publisher's plain text with the two characters as ordinary spaces: it can mark no heading. */
export const withoutHeadingMarks = (text: string) => (/[\u2002\u2003]/.test(text) ? text.replace(/[\u2002\u2003]/g, " ") : text);
