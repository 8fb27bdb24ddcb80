// A deliberately simple, explainable content-type classifier for English and
// German. Publishers write rules against these scores, so every score must be
// traceable to the cues in lexicon.ts; docs/content-types.md is the reference.
import { FIRST_PERSON, LEXICONS, TOPICAL, type Cue } from "./lexicon.js";

export const CONTENT_TYPES: readonly string[] = Object.freeze([
  "news", "opinion", "sports", "business", "culture", "science", "press_release", "advertorial",
]);

/** Evidence at which a type scores 0.5 (score = evidence / (evidence + HALF_SCORE_EVIDENCE)). */
export const HALF_SCORE_EVIDENCE = 3;
/** Types scoring below this are not reported. */
export const SCORE_THRESHOLD = 0.5;
/** Topical evidence is divided by sqrt(words / this) for longer texts, so length alone does not make a topic. */
const LENGTH_UNIT_WORDS = 300;

export interface CueMatch {
  cue: string;
  weight: number;
  hits: number;
  inTitle: boolean;
}

export interface TypeExplanation {
  name: string;
  score: number;
  evidence: number;
  matches: CueMatch[];
}

/** How one token of a word cue is compared: exactly, as a prefix/suffix/infix, or any word. */
const enum Fit {
  Exact,
  Prefix,
  Suffix,
  Infix,
  Any,
}

interface WordMatcher {
  fit: Fit;
  core: string;
}

interface CompiledCue {
  label: string;
  weight: number;
  /** Word cues: one matcher per token of the phrase. */
  words?: WordMatcher[];
  /** The first word when it is matched exactly: lets counting start only where it occurs. */
  first?: string;
  /** Structural cues run on the original text. */
  re?: RegExp;
}

const compiled = new Map<string, Map<string, CompiledCue[]>>();

function compile(lang: string): Map<string, CompiledCue[]> | undefined {
  const lexicon = LEXICONS[lang];
  if (!lexicon) return undefined;
  let byType = compiled.get(lang);
  if (!byType) {
    byType = new Map(Object.entries(lexicon).map(([type, cues]) => [type, cues.map(compileCue)]));
    compiled.set(lang, byType);
  }
  return byType;
}

function compileCue([pattern, weight]: Cue): CompiledCue {
  if (pattern instanceof RegExp) {
    const flags = pattern.flags.includes("g") ? pattern.flags : pattern.flags + "g";
    return { label: pattern.source, weight, re: new RegExp(pattern.source, flags) };
  }
  // Patterns are tokenised like the text, so "kick-off" is the two tokens "kick off".
  const words = tokenize(pattern.replace(LONE_STAR, "$1\u0001")).map(wordMatcher);
  const first = tokenize(pattern)[0];
  return { label: pattern, weight, words, first: WILDCARD_CHAR.test(first) ? undefined : first };
}

const LONE_STAR = /(^|\s)\*(?=\s|$)/g;
const WILDCARD_CHAR = /[*\u0001]/;
const EDGE_STARS = /^\*|\*$/g;
const SOFT_HYPHEN = /\u00ad/g;
const NON_WORD = /[^\p{L}\p{N}*\u0001]+/u;
const QUOTED = /“[^”]*”|„[^“”]*[“”]|»[^«]*«|"[^"]*"/g;
const LANG_SEPARATOR = /[-_]/;

// Matchers are data, not closures: classification runs per admitted article,
// and closures made per cue or per call cost allocations (and tsx's name helper).
function wordMatcher(w: string): WordMatcher {
  if (w === "\u0001") return { fit: Fit.Any, core: "" };
  const prefix = w.endsWith("*");
  const suffix = w.startsWith("*");
  const core = w.replace(EDGE_STARS, "");
  return { fit: prefix && suffix ? Fit.Infix : prefix ? Fit.Prefix : suffix ? Fit.Suffix : Fit.Exact, core };
}

function fits(m: WordMatcher, t: string): boolean {
  switch (m.fit) {
    case Fit.Exact:
      return t === m.core;
    case Fit.Prefix:
      return t.startsWith(m.core);
    case Fit.Suffix:
      return t.endsWith(m.core);
    case Fit.Infix:
      return t.includes(m.core);
    default:
      return true;
  }
}

/** Lower-case word tokens; hyphens and apostrophes split words, "*" and \u0001 survive for patterns. */
function tokenize(s: string): string[] {
  const parts = s.replace(SOFT_HYPHEN, "").toLowerCase().split(NON_WORD);
  const out: string[] = [];
  for (const p of parts) if (p) out.push(p);
  return out;
}

interface TokenText {
  tokens: string[];
  positions: Map<string, number[]>;
}

function tokenText(s: string): TokenText {
  const tokens = tokenize(s);
  const positions = new Map<string, number[]>();
  for (let i = 0; i < tokens.length; i++) {
    const list = positions.get(tokens[i]);
    if (list) list.push(i);
    else positions.set(tokens[i], [i]);
  }
  return { tokens, positions };
}

function phraseAt(words: WordMatcher[], tokens: string[], i: number): boolean {
  if (i + words.length > tokens.length) return false;
  for (let k = 0; k < words.length; k++) if (!fits(words[k], tokens[i + k])) return false;
  return true;
}

function countAt(words: WordMatcher[], tokens: string[], at: number[]): number {
  let n = 0;
  for (const i of at) if (phraseAt(words, tokens, i)) n++;
  return n;
}

function countWords(cue: CompiledCue, { tokens, positions }: TokenText): number {
  const words = cue.words!;
  if (cue.first !== undefined) {
    const at = positions.get(cue.first);
    return at ? countAt(words, tokens, at) : 0;
  }
  // Stems are tested against the distinct words, not every occurrence.
  let n = 0;
  for (const [word, at] of positions) if (fits(words[0], word)) n += countAt(words, tokens, at);
  return n;
}

function countRegExp(re: RegExp, s: string): number {
  re.lastIndex = 0;
  let n = 0;
  while (re.exec(s)) n++;
  return n;
}

function hits(cue: CompiledCue, raw: string, text: TokenText): number {
  return cue.words ? countWords(cue, text) : countRegExp(cue.re!, raw);
}

/** Quoted speech is someone else's first person, not the author's. */
function withoutQuotes(s: string): string {
  return s.replace(QUOTED, " ");
}

function baseLanguage(lang: string): string {
  return lang.trim().toLowerCase().split(LANG_SEPARATOR)[0];
}

/** Every type with its evidence and the cues behind it, in taxonomy order. Empty for unsupported languages. */
export function explainContent(input: { title: string; text: string; lang: string }): TypeExplanation[] {
  const lang = baseLanguage(input.lang ?? "");
  const byType = compile(lang);
  if (!byType) return [];
  const rawTitle = input.title ?? "";
  const rawText = input.text ?? "";
  const titleTokens = tokenText(rawTitle);
  const tokens = tokenText(rawText);
  const words = tokens.tokens.length;
  const lengthFactor = Math.max(1, Math.sqrt(words / LENGTH_UNIT_WORDS));

  return CONTENT_TYPES.map((name) => {
    const matches: CueMatch[] = [];
    let evidence = 0;
    for (const cue of byType.get(name) ?? []) {
      const n = hits(cue, rawText, tokens);
      const inTitle = hits(cue, rawTitle, titleTokens) > 0;
      if (!n && !inTitle) continue;
      // Repeats count with diminishing returns: 1, 2, 2.6, 3 … times the weight.
      evidence += (n ? cue.weight * (1 + Math.log2(n)) : 0) + (inTitle ? cue.weight : 0);
      matches.push({ cue: cue.label, weight: cue.weight, hits: n, inTitle });
    }
    if (name === "opinion" && words >= 50) {
      const pronouns = FIRST_PERSON[lang];
      let own = 0;
      for (const t of tokenize(withoutQuotes(rawText))) if (pronouns.has(t)) own++;
      const perHundred = (own / words) * 100;
      const weight = perHundred >= 3 ? 2 : perHundred >= 1.5 ? 1 : 0;
      if (weight) {
        evidence += weight;
        matches.push({ cue: `first person ${perHundred.toFixed(1)} per 100 words`, weight, hits: 1, inTitle: false });
      }
    }
    if (TOPICAL.has(name)) evidence /= lengthFactor;
    const score = Math.round((evidence / (evidence + HALF_SCORE_EVIDENCE)) * 1000) / 1000;
    return { name, score, evidence: Math.round(evidence * 1000) / 1000, matches };
  });
}

/** Detected types (score ≥ SCORE_THRESHOLD), best first; [] when nothing is clear. */
export function classifyContent(input: { title: string; text: string; lang: string }): Array<{ name: string; score: number }> {
  return explainContent(input)
    .filter((t) => t.score >= SCORE_THRESHOLD)
    .sort((a, b) => b.score - a.score || CONTENT_TYPES.indexOf(a.name) - CONTENT_TYPES.indexOf(b.name))
    .map(({ name, score }) => ({ name, score }));
}
