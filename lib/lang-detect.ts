// Which language an article is written in, when its publisher did not say (issue 35, point 4).
//
// eld (Efficient Language Detector, Apache-2.0) with its smallest database: 60 languages in
// 0.9 MB of JavaScript, about 30 MB of heap once loaded. Chosen by measuring it against franc,
// franc-min, tinyld and cld3-asm on news paragraphs (test/fixtures/news-paragraphs.ts): every one
// classified right even cut to 25 characters, at a tenth of the others' time (docs/articles.md).
//
// The text decides: a headline in another language ("Breaking News: …" over a German story)
// must not flip it, so the title counts, but never for more than a quarter of the weight.
import type { Lang } from "./voices.js";
import { DEFAULT_LANG, LANGS, SPEC_LANGS } from "./voices.js";

interface Detector {
  detect(text: string): { language: string; getScores(): Record<string, number>; isReliable(): boolean };
}

/** Characters of the text looked at: the opening says which language an article is in, and the cost stays bounded. */
export const DETECT_SAMPLE_CHARS = 500;
/** The title's weight is at most this share of the whole. */
const TITLE_SHARE = 0.25;
/** Under this many letters in all, no language is named (a word or two says too little). */
const MIN_LETTERS = 12;

let loading: Promise<Detector> | undefined;

/**
 * Loads the detector's database, once per process (it takes about half a second of CPU): call
 * it at start-up, so no create waits for it.
 */
export function loadLanguageDetector(): Promise<Detector> {
  loading ??= import("eld/extrasmall").then(
    (m) => m.eld as Detector,
    (e: unknown) => {
      loading = undefined;
      throw e;
    },
  );
  return loading;
}

export interface DetectedLanguage {
  /** ISO 639-1 code, e.g. "de". */
  language: string;
  /** The platform's locale for it (lib/voices.ts), absent when no voice speaks it. */
  locale?: Lang;
}

const TAG = /<[^>]*>/g;
const ENTITY = /&[#a-z0-9]+;/gi;
const SPACE = /\s+/g;
const LETTER = /\p{L}/gu;

/** The opening of the text as words: markup dropped when it is HTML (a cheap cut, not the parser: only the language is wanted). */
export function detectionSample(text: string, html: boolean): string {
  // Markup can be most of an HTML body's opening: take more of it before the tags go.
  let s = html ? text.slice(0, DETECT_SAMPLE_CHARS * 8).replace(TAG, " ").replace(ENTITY, " ") : text.slice(0, DETECT_SAMPLE_CHARS * 2);
  s = s.replace(SPACE, " ").trim();
  return s.slice(0, DETECT_SAMPLE_CHARS);
}

const letters = (s: string) => s.match(LETTER)?.length ?? 0;

/**
 * The platform's locale for this language, if a voice speaks it ("de" → "de-DE"); of several
 * (en-US, en-GB) the default locale, else the spec's.
 */
export function localeOfLanguage(language: string): Lang | undefined {
  const all = LANGS.filter((l) => l.split("-")[0] === language);
  return all.find((l) => l === DEFAULT_LANG) ?? all.find((l) => SPEC_LANGS.includes(l)) ?? all[0];
}

/** The language's English name ("fr" → "French"), for messages. */
export function languageName(language: string): string {
  try {
    return new Intl.DisplayNames(["en"], { type: "language" }).of(language) ?? language;
  } catch {
    return language;
  }
}

/**
 * The language of an article from its title and text; undefined when they are too short or too
 * mixed to tell. Synchronous once the detector is loaded (loadLanguageDetector).
 */
export function detectWith(detector: Detector, title: string, text: string, html = false): DetectedLanguage | undefined {
  const body = detectionSample(text, html);
  const head = title.trim().slice(0, 300);
  if (letters(body) + letters(head) < MIN_LETTERS) return undefined;
  const bodyResult = letters(body) > 0 ? detector.detect(body) : undefined;
  const headResult = letters(head) > 0 ? detector.detect(head) : undefined;
  // Weights by length, the title's capped, so a long text outvotes any headline.
  const wBody = body.length;
  const wHead = Math.min(head.length, wBody > 0 ? (wBody * TITLE_SHARE) / (1 - TITLE_SHARE) : head.length);
  const scores = new Map<string, number>();
  const add = (r: typeof bodyResult, w: number) => {
    if (!r) return;
    for (const [l, v] of Object.entries(r.getScores())) scores.set(l, (scores.get(l) ?? 0) + v * w);
  };
  add(bodyResult, wBody);
  add(headResult, wHead);
  let best: [string, number] | undefined;
  for (const e of scores) if (!best || e[1] > best[1]) best = e;
  if (!best || best[1] <= 0) return undefined;
  // The text's own answer must hold (or, for a text of a few words, the whole's).
  const reliable = bodyResult && letters(body) >= MIN_LETTERS ? bodyResult.isReliable() : detector.detect(`${head} ${body}`).isReliable();
  if (!reliable) return undefined;
  const language = best[0];
  const locale = localeOfLanguage(language);
  return locale ? { language, locale } : { language };
}

/** detectWith after the detector has loaded. */
export async function detectLanguage(title: string, text: string, html = false): Promise<DetectedLanguage | undefined> {
  return detectWith(await loadLanguageDetector(), title, text, html);
}
