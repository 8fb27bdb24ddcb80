// Pronunciation rules in the text. Before normalisation every whole-word
// match of a rule is replaced by one private-use character that names the rule
// (U+E000 + its index), so no normalisation step can reword it and chunking
// counts it as one character. Each provider then renders the marks its own
// way: Azure as SSML, OpenAI as the respelling, the local engine as eSpeak
// phonemes or the respelling. Text without rules never holds a mark.
import { PRONUNCIATION_LIMITS, rulesForLang, type PronunciationRule } from "../../../lib/pronunciations.js";
import { spellLetters } from "./abbreviations.js";
import { langKey } from "./lang.js";

export type { PronunciationRule } from "../../../lib/pronunciations.js";

const BASE = 0xe000;
const MARKS = new RegExp(`[\\u{${BASE.toString(16)}}-\\u{${(BASE + PRONUNCIATION_LIMITS.rules - 1).toString(16)}}]`, "gu");

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
const normal = (s: string) => s.replace(/\s+/g, " ").trim();

interface Matcher {
  re: RegExp;
  /** Rule indexes, longest match first. */
  order: number[];
}
const matchers = new WeakMap<readonly PronunciationRule[], Map<string, Matcher | null>>();

/** The rules of `lang` as one pattern; their indexes stay those of the whole list, which the providers get. */
function matcher(rules: readonly PronunciationRule[], lang: string): Matcher | null {
  let byLang = matchers.get(rules);
  if (!byLang) matchers.set(rules, (byLang = new Map()));
  let m = byLang.get(lang);
  if (m === undefined) {
    const applicable = new Set(rulesForLang(rules, lang));
    const order = rules
      .map((_, i) => i)
      .filter((i) => i < PRONUNCIATION_LIMITS.rules && applicable.has(rules[i]))
      .sort((a, b) => rules[b].match.length - rules[a].match.length);
    const alternatives = order.map((i) => escape(normal(rules[i].match)).replace(/ /g, "\\s+"));
    // Whole words: no letter, mark or digit on either side.
    m = order.length ? { re: new RegExp(`(?<![\\p{L}\\p{M}\\p{N}_])(?:${alternatives.join("|")})(?![\\p{L}\\p{M}\\p{N}_])`, "giu"), order } : null;
    byLang.set(lang, m);
  }
  return m;
}

/** Replaces each whole-word match of a rule of `lang` by its mark. */
export function markPronunciations(text: string, rules: readonly PronunciationRule[] | undefined, lang: string): string {
  if (!rules?.length) return text;
  const found = matcher(rules, lang);
  if (!found) return text;
  const { re, order } = found;
  return text.replace(re, (m) => {
    const written = normal(m);
    for (const i of order) {
      const r = rules[i];
      const want = normal(r.match);
      if (r.caseSensitive ? written === want : written.toLowerCase() === want.toLowerCase()) return String.fromCodePoint(BASE + i);
    }
    // Only a case-sensitive rule matched, and only when case is ignored.
    return m;
  });
}

/** True when the text holds at least one mark. */
export const hasMarks = (text: string) => text.search(MARKS) !== -1;

/** The rules whose marks the text holds, by index, each once: what a chunk's cache key must cover. */
export function touchedRules(text: string, rules: readonly PronunciationRule[] | undefined): Array<[index: number, rule: PronunciationRule]> {
  if (!rules?.length || !hasMarks(text)) return [];
  const seen = new Set<number>();
  for (const m of text.matchAll(MARKS)) seen.add(m[0].codePointAt(0)! - BASE);
  return [...seen].sort((a, b) => a - b).flatMap((i) => (rules[i] ? [[i, rules[i]] as [number, PronunciationRule]] : []));
}

/** The text with every mark replaced by what `render` makes of its rule; marks of unknown rules become nothing. */
export function renderMarks(text: string, rules: readonly PronunciationRule[] | undefined, render: (rule: PronunciationRule) => string): string {
  if (!hasMarks(text)) return text;
  return text.replace(MARKS, (c) => {
    const rule = rules?.[c.codePointAt(0)! - BASE];
    return rule ? render(rule) : "";
  });
}

/** Text and marks in order, for renderers that escape the text (SSML). */
export function splitMarks(text: string, rules: readonly PronunciationRule[] | undefined): Array<string | PronunciationRule> {
  const out: Array<string | PronunciationRule> = [];
  let last = 0;
  for (const m of text.matchAll(MARKS)) {
    if (m.index > last) out.push(text.slice(last, m.index));
    const rule = rules?.[m[0].codePointAt(0)! - BASE];
    if (rule) out.push(rule);
    last = m.index + m[0].length;
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}

/**
 * What a provider without phoneme input reads for a rule: the respelling, the
 * letters one by one, or for an IPA rule its `say` fallback, else the word as
 * the rule writes it (the voice's own reading, no worse than without a rule).
 */
export function respelling(rule: PronunciationRule, lang: string): string {
  if (rule.say !== undefined) return rule.say;
  if (rule.spell) return spellLetters(rule.match, langKey(lang));
  return rule.match;
}

/** The text as a provider without phoneme input reads it. */
export const respellMarks = (text: string, rules: readonly PronunciationRule[] | undefined, lang: string) => renderMarks(text, rules, (r) => respelling(r, lang));

// IPA → eSpeak phoneme mnemonics for the common symbols of English and German.
// Sequences first (affricates, diphthongs), then single symbols.
const IPA_TO_ESPEAK: Array<[string, string]> = [
  ["tʃ", "tS"], ["dʒ", "dZ"], ["aɪ", "aI"], ["aʊ", "aU"], ["eɪ", "eI"], ["oʊ", "oU"], ["əʊ", "oU"], ["ɔɪ", "OI"], ["ɔʏ", "OY"],
  ["ɪə", "i@"], ["eə", "e@"], ["ʊə", "U@"], ["ɜː", "3:"], ["ɑː", "A:"], ["ɔː", "O:"], ["iː", "i:"], ["uː", "u:"],
  ["ˈ", "'"], ["ˌ", ","], ["ː", ":"], ["ə", "@"], ["æ", "a"], ["ɑ", "A"], ["ɒ", "0"], ["ɔ", "O"], ["ɛ", "E"], ["ɪ", "I"], ["ʊ", "U"],
  ["ʌ", "V"], ["ɜ", "3"], ["ɐ", "6"], ["ʏ", "Y"], ["ø", "Y"], ["œ", "W"], ["ŋ", "N"], ["ʃ", "S"], ["ʒ", "Z"], ["θ", "T"], ["ð", "D"],
  ["ɹ", "r"], ["ʁ", "R"], ["ɾ", "*"], ["ç", "C"], ["ʔ", "?"], ["ɡ", "g"], ["ɫ", "l"], ["ɲ", "n^"], ["ʎ", "l^"],
  ...[..."abdefhijklmnoprstuvwxyz"].map((c): [string, string] => [c, c]),
  [".", ""], [" ", " "], ["‿", ""],
];

/** eSpeak phoneme input for an IPA string, or undefined when it holds a symbol outside the table. */
export function ipaToEspeak(ipa: string): string | undefined {
  const s = ipa.normalize("NFC").replace(/^[/[]|[/\]]$/g, "");
  let out = "";
  let i = 0;
  outer: while (i < s.length) {
    for (const [from, to] of IPA_TO_ESPEAK) {
      if (s.startsWith(from, i)) {
        out += to;
        i += from.length;
        continue outer;
      }
    }
    return undefined;
  }
  return out.trim() || undefined;
}

/** Delimit eSpeak phoneme input in text handed to the local engine, which turns them into "[[" and "]]" (engine/text.ts). */
export const PHONEMES_OPEN = "\uF8F0";
export const PHONEMES_CLOSE = "\uF8F1";
