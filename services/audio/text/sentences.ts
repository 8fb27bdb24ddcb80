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

/** True when the text ends with something whose period does not close a sentence. */
function endsWithAbbreviation(segment: string, key: "en" | "de"): boolean {
  let re = endPatterns.get(key);
  if (!re) {
    const words = NON_FINAL[key].map((w) => escape(w).replace(/\\\. /g, "\\.\\s?"));
    re = new RegExp(`(?<![^\\s(])(?:${words.join("|")})\\.$`, "u");
    endPatterns.set(key, re);
  }
  return re.test(segment.trimEnd());
}

// Single letters are initials or parts of "z. B." ("J. Smith", spelled "U S."); they must
// start a word, so "word." or "km/h." never match through their last letter. Dotted
// initialisms ("U.S.", "D.C.", "Ph.D.") count too.
const INITIAL_END = /(?<![^\s(])(?:\p{L}|(?:\p{Lu}\p{Ll}?\.)+\p{Lu})\.$/u;

/** An initial's period ends the sentence only when a sentence opener (or nothing) follows it. */
function initialInside(segment: string, next: string, key: "en" | "de"): boolean {
  return INITIAL_END.test(segment.trimEnd()) && !startsNewSentence(` ${next.trimStart()}`, key);
}

const GERMAN_ORDINAL_NOUN = new RegExp(`^\\s*(?:${MONTHS.de.join("|")}|Jahrhundert|Jahrtausend|Mal|Platz|Stock|Klasse|Liga|Bundesliga|Runde|Etage|Spieltag|Weltkrieg|FC)\\b`);

function germanOrdinalBreak(prev: string, next: string): boolean {
  if (!/(?<![\d.,])\d{1,2}\.$/.test(prev.trimEnd())) return false;
  return GERMAN_ORDINAL_NOUN.test(next) || /^\s*\p{Ll}/u.test(next);
}

/** Sentences of one paragraph, trimmed, in order; joined with spaces they give the text back. */
export function splitSentences(text: string, lang: string): string[] {
  const key = langKey(lang);
  const protectedSpans: Array<[number, number]> = [];
  for (const m of text.matchAll(URL_PATTERN)) protectedSpans.push([m.index, m.index + m[0].length]);
  const insideProtected = (at: number) => protectedSpans.some(([a, b]) => at > a && at < b);

  const out: string[] = [];
  let current = "";
  for (const { segment, index } of segmenter(lang).segment(text)) {
    if (current === "") {
      current = segment;
      continue;
    }
    const join =
      insideProtected(index) || endsWithAbbreviation(current, key) || initialInside(current, segment, key) || (key === "de" && germanOrdinalBreak(current, segment));
    if (join) current += segment;
    else {
      out.push(current);
      current = segment;
    }
  }
  if (current) out.push(current);
  return out.map((s) => s.trim()).filter((s) => s.length > 0);
}
