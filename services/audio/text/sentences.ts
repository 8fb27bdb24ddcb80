// Sentence splitting with Intl.Segmenter, corrected where its rules break
// too eagerly for articles: after abbreviations and initials ("Dr. Smith",
// "z. B. der", "J. R. R."), German ordinals ("am 3. Oktober") and inside
// web addresses.
import { NON_FINAL, startsNewSentence } from "./abbreviations.js";
import { langKey, MONTHS } from "./lang.js";
import { URL_PATTERN } from "./urls.js";

const segmenters = new Map<string, Intl.Segmenter>();

function segmenter(lang: string): Intl.Segmenter {
  let s = segmenters.get(lang);
  if (!s) {
    s = new Intl.Segmenter(lang, { granularity: "sentence" });
    segmenters.set(lang, s);
  }
  return s;
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
const endPatterns = new Map<string, RegExp>();

/** Matches the end of a text whose last period does not close a sentence (an abbreviation). */
function abbreviationEnd(key: "en" | "de"): RegExp {
  let re = endPatterns.get(key);
  if (!re) {
    const words = NON_FINAL[key].map((w) => escape(w).replace(/\\\. /g, "\\.\\s?"));
    re = new RegExp(`(?<![^\\s(])(?:${words.join("|")})\\.$`, "u");
    endPatterns.set(key, re);
  }
  return re;
}

// Single letters are initials or parts of "z. B." ("J. Smith", spelled "U S."); they must
// start a word, so "word." or "km/h." never match through their last letter. Dotted
// initialisms ("U.S.", "D.C.", "Ph.D.") count too.
const INITIAL_END = /(?<![^\s(])(?:\p{L}|(?:\p{Lu}\p{Ll}?\.)+\p{Lu})\.$/u;

const GERMAN_ORDINAL_NOUN = new RegExp(`^\\s*(?:${MONTHS.de.join("|")}|Jahrhundert|Jahrtausend|Mal|Platz|Stock|Klasse|Liga|Bundesliga|Runde|Etage|Spieltag|Weltkrieg|FC)\\b`);

// "am 3." before a month or a word in lower case: an ordinal, not a sentence end.
const GERMAN_ORDINAL_END = /(?<![\d.,])\d{1,2}\.$/;

// Intl.Segmenter's time per segment grows with the length of the string it segments, so one
// long paragraph of short sentences took quadratic time (100,000 characters of "Dr. ": 1.5 s).
// It reads the paragraph through windows instead, each starting at a sentence boundary found in
// the one before.
const WINDOW = 4096;

function* segments(seg: Intl.Segmenter, text: string): Generator<{ segment: string; index: number }> {
  let pos = 0;
  let size = WINDOW;
  while (pos < text.length) {
    const end = Math.min(text.length, pos + size);
    const it = seg.segment(text.slice(pos, end))[Symbol.iterator]();
    if (end === text.length) {
      for (let s = it.next(); !s.done; s = it.next()) yield { segment: s.value.segment, index: s.value.index + pos };
      return;
    }
    let last = it.next();
    let next = it.next();
    // One sentence fills the window: look further.
    if (next.done) {
      size *= 2;
      continue;
    }
    // Every segment but the window's last ends before more text of the window; the last may be
    // cut by the window's end and is read again from its start. After a grown window only its
    // first sentence is taken, so that no long window is read through.
    for (let taken = 0; !next.done && (size === WINDOW || taken === 0); taken++) {
      if (last.done) break;
      yield { segment: last.value.segment, index: last.value.index + pos };
      last = next;
      next = it.next();
    }
    pos += last.done ? end - pos : last.value.index;
    size = WINDOW;
  }
}

// What the checks above look at: the end of the sentence so far. Every pattern they use is
// anchored at its end and spans a few characters (the longest abbreviation is "i. d. R."), so
// they read only its last characters: a sentence that grew long through many joins ("Dr. Dr.
// Dr. …") is not scanned from its start at every segment, which made splitting quadratic.
const TAIL = 64;

/** Sentences of one paragraph, trimmed, in order; joined with spaces they give the text back. */
export function splitSentences(text: string, lang: string): string[] {
  const key = langKey(lang);
  // Web addresses in order of their start; segments come in order too, so one cursor walks them.
  const protectedSpans: Array<[number, number]> = [];
  for (const m of text.matchAll(URL_PATTERN)) protectedSpans.push([m.index, m.index + m[0].length]);
  let span = 0;
  const insideProtected = (at: number) => {
    while (span < protectedSpans.length && protectedSpans[span][1] <= at) span++;
    return span < protectedSpans.length && at > protectedSpans[span][0] && at < protectedSpans[span][1];
  };

  const out: string[] = [];
  // The sentence so far: its segments, and its last characters as they are and without trailing spaces.
  let parts: string[] = [];
  let raw = "";
  let tail = "";
  const add = (segment: string) => {
    parts.push(segment);
    raw = (raw + segment).slice(-4 * TAIL);
    tail = raw.trimEnd().slice(-TAIL);
  };
  for (const { segment, index } of segments(segmenter(lang), text)) {
    if (parts.length === 0) {
      add(segment);
      continue;
    }
    const join =
      insideProtected(index) ||
      abbreviationEnd(key).test(tail) ||
      (INITIAL_END.test(tail) && !startsNewSentence(` ${segment.trimStart()}`, key)) ||
      (key === "de" && GERMAN_ORDINAL_END.test(tail) && (GERMAN_ORDINAL_NOUN.test(segment) || /^\s*\p{Ll}/u.test(segment)));
    if (!join) {
      out.push(parts.join(""));
      parts = [];
      raw = "";
    }
    add(segment);
  }
  if (parts.length) out.push(parts.join(""));
  return out.map((s) => s.trim()).filter((s) => s.length > 0);
}
