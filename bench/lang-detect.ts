// Issue 35 benchmark: what language detection costs a create without `lang`, and how right it is.
// (a) CPU per article of detectWith (lib/lang-detect.ts) on title + text of news articles of
// ~1,500 characters (it reads the title and the text's first 500), English and German.
// Reference in the same run: what the embedded store already spends on the same text per create,
// deflating it (its TEXT_FIELDS, with the store's settings). (b) Accuracy on the test suite's
// paragraphs (test/fixtures/news-paragraphs.ts), whole and cut to 100, 50 and 25 characters.
// (c) Load time and heap of the detector's database, once per process.
// Run: npm run bench:lang (also in `npm run bench`, suite `lang`).
import { mkdirSync, writeFileSync } from "node:fs";
import os from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { deflateRawSync } from "node:zlib";
import { detectWith, loadLanguageDetector } from "../lib/lang-detect.js";
import { ENGLISH_PARAGRAPHS, GERMAN_PARAGRAPHS } from "../test/fixtures/news-paragraphs.js";

const HERE = dirname(fileURLToPath(import.meta.url));
const ROUNDS = Number(process.env.BENCH_LANG_ROUNDS ?? 2000);

const cpuUs = () => {
  const u = process.cpuUsage();
  return u.user + u.system;
};
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];

export interface LangDetectFigures {
  detectUsPerArticle: number;
  deflateUsPerArticle: number;
  ratio: number;
  articleChars: number;
  accuracy: Record<string, string>;
  loadMs: number;
  heapMB: number;
  loadAverage: number;
}

export async function benchLangDetect(): Promise<LangDetectFigures> {
  const heapBefore = process.memoryUsage().heapUsed;
  let t = performance.now();
  const detector = await loadLanguageDetector();
  const loadMs = performance.now() - t;
  globalThis.gc?.();
  const heapMB = (process.memoryUsage().heapUsed - heapBefore) / 1e6;

  // Articles of five or six paragraphs, so the sample cut (500 characters) is what is read.
  const articles = [...ENGLISH_PARAGRAPHS, ...GERMAN_PARAGRAPHS].map((_, i, all) => ({
    title: i < 20 ? "Council keeps the library open" : "Stadtrat hält die Bücherei offen",
    text: [0, 1, 2, 3, 4, 5].map((k) => all[(i < 20 ? 0 : 20) + ((i + k) % 20)]).join("\n\n"),
  }));
  const articleChars = Math.round(articles.reduce((n, a) => n + a.text.length, 0) / articles.length);
  const DEFLATE = { level: 6, windowBits: 12, memLevel: 5 } as const;

  // Interleaved rounds of both, medians of their per-article CPU: the load of the machine hits both alike.
  const detect: number[] = [];
  const deflate: number[] = [];
  for (let r = 0; r < 5; r++) {
    let c = cpuUs();
    for (let i = 0; i < ROUNDS / 5; i++) {
      const a = articles[i % articles.length];
      detectWith(detector, a.title, a.text);
    }
    detect.push((cpuUs() - c) / (ROUNDS / 5));
    c = cpuUs();
    for (let i = 0; i < ROUNDS / 5; i++) deflateRawSync(JSON.stringify({ text: articles[i % articles.length].text }), DEFLATE);
    deflate.push((cpuUs() - c) / (ROUNDS / 5));
  }

  const accuracy: Record<string, string> = {};
  for (const cut of [Infinity, 100, 50, 25]) {
    let right = 0;
    for (const p of ENGLISH_PARAGRAPHS) if (detectWith(detector, "", p.slice(0, cut))?.language === "en") right++;
    for (const p of GERMAN_PARAGRAPHS) if (detectWith(detector, "", p.slice(0, cut))?.language === "de") right++;
    accuracy[cut === Infinity ? "whole" : `first${cut}`] = `${right}/${ENGLISH_PARAGRAPHS.length + GERMAN_PARAGRAPHS.length}`;
  }
  const detectUs = median(detect);
  const deflateUs = median(deflate);
  return { detectUsPerArticle: detectUs, deflateUsPerArticle: deflateUs, ratio: detectUs / deflateUs, articleChars, accuracy, loadMs, heapMB, loadAverage: os.loadavg()[0] };
}

export function formatLangDetect(f: LangDetectFigures): string {
  return (
    `language detection: ${f.detectUsPerArticle.toFixed(0)} µs CPU per article (${f.articleChars} characters, title + first 500 read) against ${f.deflateUsPerArticle.toFixed(0)} µs ` +
    `for the store's deflate of the same text (× ${f.ratio.toFixed(1)}); right on ${Object.entries(f.accuracy)
      .map(([k, v]) => `${v} ${k}`)
      .join(", ")} of the test paragraphs; database loaded once in ${f.loadMs.toFixed(0)} ms, ${f.heapMB.toFixed(0)} MB of heap (load ${f.loadAverage.toFixed(1)})`
  );
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const f = await benchLangDetect();
  console.log(formatLangDetect(f));
  mkdirSync(join(HERE, "results"), { recursive: true });
  writeFileSync(join(HERE, "results", "lang-detect.json"), `${JSON.stringify(f, null, 2)}\n`);
}
