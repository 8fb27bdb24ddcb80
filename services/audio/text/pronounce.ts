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

const normal = (s: string) => s.replace(/\s+/g, " ").trim();

// Every character the pipeline gives a meaning of its own: the rule marks and the local engine's
// phoneme delimiters (PHONEMES_OPEN, PHONEMES_CLOSE below). Written by a publisher they would
// name a rule or switch eSpeak to phoneme input, so they are dropped from every text the
// pipeline reads, before anything else is done with it.
const RESERVED = new RegExp(`[\\u{${BASE.toString(16)}}-\\u{${(BASE + PRONUNCIATION_LIMITS.rules - 1).toString(16)}}\\uF8F0-\\uF8F3]`, "gu");

/** The text without any character the pipeline reserves for its marks. */
export const withoutReserved = (text: string) => text.replace(RESERVED, "");

/** The rules with those characters dropped from every text field; the same list when none holds one (the matcher is cached per list). */
export function rulesWithoutReserved(rules: readonly PronunciationRule[]): readonly PronunciationRule[] {
  const holds = (v: string | undefined) => v !== undefined && withoutReserved(v) !== v;
  if (!rules.some((r) => holds(r.match) || holds(r.say) || holds(r.ipa) || holds(r.lang))) return rules;
  return rules.map((r) => {
    const out: PronunciationRule = { ...r, match: withoutReserved(r.match) };
    if (r.say !== undefined) out.say = withoutReserved(r.say);
    if (r.ipa !== undefined) out.ipa = withoutReserved(r.ipa);
    if (r.lang !== undefined) out.lang = withoutReserved(r.lang);
    return out;
  });
}

const matchers = new WeakMap<readonly PronunciationRule[], Map<string, Node | null>>();

// Whole words: no letter, mark, digit or underscore on either side of a match.
const WORD_CHAR = /[\p{L}\p{M}\p{N}_]/u;
// The trie's key for a run of whitespace (no code point is negative).
const SPACE_KEY = -1;

// Per code point, with ASCII answered by arithmetic (matching reads every character of the
// text, and most of it is ASCII) and the rest of the BMP remembered in fixed tables: 0 unknown.
const wordChars = new Uint8Array(0x10000);
function isWordCode(cp: number): boolean {
  if (cp < 128) return (cp >= 97 && cp <= 122) || (cp >= 65 && cp <= 90) || (cp >= 48 && cp <= 57) || cp === 95;
  if (cp > 0xffff) return WORD_CHAR.test(String.fromCodePoint(cp));
  if (wordChars[cp] === 0) wordChars[cp] = WORD_CHAR.test(String.fromCharCode(cp)) ? 2 : 1;
  return wordChars[cp] === 2;
}
const isSpaceCode = (cp: number) => (cp < 128 ? cp === 32 || (cp >= 9 && cp <= 13) : /\s/.test(String.fromCharCode(cp)));

/** A code point as case-insensitive matching compares it; one whose lower case is more than one code point (İ) stays as written. */
const folds = new Int32Array(0x10000);
function fold(cp: number): number {
  if (cp < 128) return cp >= 65 && cp <= 90 ? cp + 32 : cp;
  if (cp <= 0xffff && folds[cp] !== 0) return folds[cp] - 1;
  const lower = [...String.fromCodePoint(cp).toLowerCase()];
  const f = lower.length === 1 ? lower[0].codePointAt(0)! : cp;
  if (cp <= 0xffff) folds[cp] = f + 1;
  return f;
}

interface Node {
  /** Next node by folded code point, or SPACE_KEY for any run of whitespace. */
  next: Map<number, Node>;
  /** Rules whose whole match ends here, best first: longest match, then lowest index. */
  rules: number[];
  /** Keys from the root: the length of a match ending here. */
  depth: number;
  /** The longest proper suffix of this node's path that is also a path from the root (Aho–Corasick). */
  fail: Node | null;
  /** The nearest node along the fail links that ends a rule. */
  out: Node | null;
}

const node = (depth: number): Node => ({ next: new Map(), rules: [], depth, fail: null, out: null });

/**
 * The rules of `lang` as an Aho–Corasick automaton over folded code points; their indexes stay
 * those of the whole list, which the providers get. The text is read once, one step per
 * character (plus the rules ending there), whatever the rules are: linear in the text. (One
 * regular expression of all the rules backtracked for minutes on rules sharing long prefixes.)
 */
function matcher(rules: readonly PronunciationRule[], lang: string): Node | null {
  let byLang = matchers.get(rules);
  if (!byLang) matchers.set(rules, (byLang = new Map()));
  let m = byLang.get(lang);
  if (m === undefined) {
    const applicable = new Set(rulesForLang(rules, lang));
    const order = rules
      .map((_, i) => i)
      .filter((i) => i < PRONUNCIATION_LIMITS.rules && applicable.has(rules[i]) && normal(rules[i].match) !== "")
      .sort((a, b) => rules[b].match.length - rules[a].match.length || a - b);
    const root = node(0);
    for (const i of order) {
      let at = root;
      for (const c of normal(rules[i].match)) {
        const key = c === " " ? SPACE_KEY : fold(c.codePointAt(0)!);
        let next = at.next.get(key);
        if (!next) at.next.set(key, (next = node(at.depth + 1)));
        at = next;
      }
      at.rules.push(i);
    }
    // Fail links breadth first: a node's fail link is found from its parent's.
    const queue: Node[] = [];
    for (const child of root.next.values()) {
      child.fail = root;
      queue.push(child);
    }
    for (let q = 0; q < queue.length; q++) {
      const parent = queue[q];
      for (const [key, child] of parent.next) {
        let f = parent.fail!;
        while (f !== root && !f.next.has(key)) f = f.fail!;
        child.fail = f.next.get(key) ?? root;
        child.out = child.fail.rules.length ? child.fail : child.fail.out;
        queue.push(child);
      }
    }
    m = order.length ? root : null;
    byLang.set(lang, m);
  }
  return m;
}

/** The code point that ends just before `at`. */
const codePointBefore = (text: string, at: number) => {
  const low = text.charCodeAt(at - 1);
  return low >= 0xdc00 && low <= 0xdfff && at >= 2 ? text.codePointAt(at - 2)! : low;
};

/** Which rule `a` or `b` wins where both match at the same place: the longer, then the first. */
const better = (rules: readonly PronunciationRule[], a: number, b: number) =>
  rules[a].match.length > rules[b].match.length || (rules[a].match.length === rules[b].match.length && a < b);

/**
 * Replaces each whole-word match of a rule of `lang` by its mark. As a regular expression of the
 * rules would: scanning from the left, the first place where a rule matches whole words wins,
 * with its longest rule; whitespace runs match any whitespace; case counts only for rules that
 * say so. One pass finds every match; choosing among them is linear too.
 */
export function markPronunciations(text: string, rules: readonly PronunciationRule[] | undefined, lang: string): string {
  if (!rules?.length) return text;
  const root = matcher(rules, lang);
  if (!root) return text;
  // Where each key of the text starts, by key index (a whitespace run is one key).
  const keyStarts = new Int32Array(text.length + 1);
  // The best match starting at a text offset: rule and end.
  const found = new Map<number, { rule: number; end: number }>();
  let keys = 0;
  let state = root;
  for (let j = 0; j < text.length; ) {
    const cp = text.codePointAt(j)!;
    let step = cp > 0xffff ? 2 : 1;
    let key: number;
    if (isSpaceCode(cp)) {
      key = SPACE_KEY;
      while (j + step < text.length && isSpaceCode(text.charCodeAt(j + step))) step++;
    } else key = fold(cp);
    keyStarts[keys++] = j;
    while (state !== root && !state.next.has(key)) state = state.fail!;
    state = state.next.get(key) ?? root;
    j += step;
    const ending = state.rules.length ? state : state.out;
    // Whole words: nothing that ends here may be followed by a word character.
    if (!ending || (j < text.length && isWordCode(text.codePointAt(j)!))) continue;
    for (let at: Node | null = ending; at; at = at.out) {
      const start = keyStarts[keys - at.depth];
      if (start > 0 && isWordCode(codePointBefore(text, start))) continue;
      const have = found.get(start);
      for (const i of at.rules) {
        if (have && !better(rules, i, have.rule)) break;
        if (rules[i].caseSensitive && normal(text.slice(start, j)) !== normal(rules[i].match)) continue;
        found.set(start, { rule: i, end: j });
        break;
      }
    }
  }
  if (found.size === 0) return text;
  let out = "";
  let copied = 0;
  for (const start of [...found.keys()].sort((a, b) => a - b)) {
    if (start < copied) continue;
    const { rule, end } = found.get(start)!;
    out += text.slice(copied, start) + String.fromCodePoint(BASE + rule);
    copied = end;
  }
  return out + text.slice(copied);
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
/** Put by the HTML reader before the text of an h2 or h3, so the paragraph is known as a chapter start (text/html.ts). */
export const HEADING_MARKS = { 2: "\uF8F2", 3: "\uF8F3" } as const;
