// Which language an article is written in, when its publisher did not say (issue 35, point 4).
//
// franc-min (MIT): trigram profiles of the 82 languages with the most speakers, about 11 MB of
// memory once loaded. eld (Efficient Language Detector) was measured first and classified a little
// more of the shortest cuts right (docs/api.md), but its smallest database held about 90 MB of
// RSS, more than a third of the embedded default's budget for everything it does after start;
// franc-min classifies every one of the news paragraphs of test/fixtures/news-paragraphs.ts right
// at a few milliseconds a create at most, which the create path affords.
//
// The text decides: a headline in another language ("Breaking News: …" over a German story)
// must not flip it, so the title counts, but never for more than a quarter of the weight.
import type { Lang } from "./voices.js";
import { DEFAULT_LANG, LANGS, SPEC_LANGS } from "./voices.js";

interface Detector {
  detect(text: string): { language: string; getScores(): Record<string, number>; isReliable(): boolean };
}

/** franc's runner-up within this share of the best: too close to call. */
const CLOSE_CALL = 0.97;

/**
 * ISO 639-3 as franc names languages ("deu") → the tag the platform's locales use ("de"), where one
 * exists. Remembered: franc scores all its languages on every detection, and asking Intl each time
 * cost more than franc itself (a detection took 0.8-1.0 ms of CPU, 0.4-0.6 ms with the names remembered).
 */
const shortTags = new Map<string, string>();
function shortTag(code: string): string {
  let tag = shortTags.get(code);
  if (tag === undefined) {
    try {
      tag = Intl.getCanonicalLocales(code)[0] ?? code;
    } catch {
      tag = code;
    }
    shortTags.set(code, tag);
  }
  return tag;
}

/** franc-min's scores (the best 1, the others relative to it) behind the interface detectWith reads. */
function francDetector(francAll: (text: string, options?: { minLength?: number }) => Array<[string, number]>): Detector {
  return {
    detect(text) {
      const all = francAll(text, { minLength: 10 }).filter(([code]) => code !== "und");
      const scores = Object.fromEntries(all.map(([code, score]) => [shortTag(code), score]));
      const reliable = all.length > 0 && (all.length < 2 || all[1][1] < CLOSE_CALL * all[0][1]);
      return { language: all.length ? shortTag(all[0][0]) : "und", getScores: () => scores, isReliable: () => reliable };
    },
  };
}

/** Characters of the text looked at: the opening says which language an article is in, and the cost stays bounded. */
export const DETECT_SAMPLE_CHARS = 500;
/** The title's weight is at most this share of the whole. */
const TITLE_SHARE = 0.25;
/**
 * Under this many letters in all, no language is named: a line or two says too little for
 * trigrams ("Nulls. Null means absent." reads as French to them), and the project's default is
 * the better guess.
 */
const MIN_LETTERS = 40;

let loading: Promise<Detector> | undefined;

/**
 * Loads the detector's trigram profiles, once per process: call it at start-up, so no create
 * waits for it.
 */
export function loadLanguageDetector(): Promise<Detector> {
  loading ??= import("franc-min").then(
    (m) => francDetector(m.francAll),
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
