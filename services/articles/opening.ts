// The opening of an article's body, for podcast item descriptions: its first
// paragraph, cut at a word. Worked out from the text already read for the
// listing, so a feed costs no extra reads; bounded, so neither a one-paragraph
// article nor a page of them makes it expensive.

/** Characters of an opening, the ellipsis included. */
export const OPENING_MAX_CHARS = 300;
// Far more than a first paragraph that is cut to an opening needs, even after a few headings.
const SCAN_CHARS = 8_192;
// A heading or kicker parsed from HTML: short, and not a sentence.
const HEADING_MAX_CHARS = 80;
const SENTENCE_END = /[.!?…:;"'»«“”‘’)\]]$/u;

/** Blank lines part paragraphs; a text without any has one per line (as the audio service reads it). */
function paragraphs(text: string): string[] {
  const t = text.replace(/\r\n?/g, "\n");
  const parts = /\n[^\S\n]*\n/.test(t) ? t.split(/\n[^\S\n]*\n/) : t.split("\n");
  return parts.map((p) => p.replace(/\s+/g, " ").trim()).filter(Boolean);
}

/** Up to `max` characters (code points, not halves of one), ending at a word, with "…" when cut. */
export function cutAtWord(s: string, max = OPENING_MAX_CHARS): string {
  const chars = Array.from(s);
  if (chars.length <= max) return s;
  const head = chars.slice(0, max - 1).join("");
  const space = head.lastIndexOf(" ");
  // A run without spaces (a URL, a script without them) is cut where it has to be.
  return `${(space > max / 2 ? head.slice(0, space) : head).replace(/[\s,;:–—-]+$/u, "")}…`;
}

/**
 * The first paragraph of the body that reads as one: not the title repeated, not a heading
 * (parsed pages keep those as paragraphs of their own). Empty when the text has none.
 */
export function openingOf(text: string, title: string): string {
  const paras = paragraphs(text.length > SCAN_CHARS ? text.slice(0, SCAN_CHARS) : text);
  const sameAsTitle = (p: string) => p.toLowerCase() === title.replace(/\s+/g, " ").trim().toLowerCase();
  const body = paras.filter((p) => !sameAsTitle(p));
  const first = body.find((p) => p.length > HEADING_MAX_CHARS || SENTENCE_END.test(p)) ?? body[0] ?? "";
  return cutAtWord(first);
}
