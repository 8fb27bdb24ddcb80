// Search at scale on the embedded default (issue 36, point 1): what the FTS5 index costs on disk
// and at an upgrade, and what a search costs a publisher, at N articles of the scale suite's
// archive (archive-text.ts).
//
//   1. The archive is written into the article store as a release before search kept it (no
//      index; parked on demand, so no audio is made), straight into the store: the import path is
//      the scale suite's subject, not this one's.
//   2. The store is opened as this release opens it: the time until its background fill has
//      indexed every article is the upgrade's cost; the data directory before and after (each
//      measured closed, the write-ahead log folded in) is the index's size.
//   3. `npm start`'s process serves the directory; GET /api/articles?q= with two words taken from
//      a random article's title and text (so as common as the archive's words are), first page
//      of 10, against the plain first list page measured in the same run as the reference; then
//      the same with status=ready, and the worst case: two of the commonest words.
//
//   npm run bench:search          N = 1,000,000
//   BENCH_SEARCH_N=100000 npm run bench:search
//
// Environment: BENCH_SEARCH_N, BENCH_SEARCH_SAMPLES (requests per figure, default 1,000),
// BENCH_SCALE_TEXT (characters per article, default 1,000), BENCH_SEARCH_KEEP=1 keeps the directory,
// BENCH_SEARCH_ARCHIVE=dir keeps the archive as step 1 wrote it in `dir` and copies it from there
// on the next run of the same N (step 1 takes most of an hour at a million; steps 2 and 3 are what
// a change to the index or the query moves).
import http from "node:http";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { wordsOf } from "../lib/search-words.js";
import { openEmbeddedArticleStore } from "../services/articles/store/open.js";
import { EMBEDDED_TOKEN, startEmbeddedProcess } from "../test/support/embedded-process.js";
import { archiveArticle } from "./archive-text.js";
import { quantile } from "./quantile.js";

const n = Number((process.env.BENCH_SEARCH_N ?? "1000000").replace(/_/g, ""));
const samples = Number(process.env.BENCH_SEARCH_SAMPLES ?? 1000);
const textChars = Number(process.env.BENCH_SCALE_TEXT ?? 1000);
const PROJECT = "measured";
const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
const load = () => loadavg().map((l) => l.toFixed(1)).join(" ");

const dirBytes = (dir: string): number => readdirSync(dir, { recursive: true, withFileTypes: true }).reduce((s, e) => s + (e.isFile() ? statSync(join(e.parentPath, e.name)).size : 0), 0);

function get(base: string, path: string): Promise<{ ms: number; count: number }> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const req = http.get(`${base}${path}`, { agent, headers: { authorization: `Bearer ${EMBEDDED_TOKEN}` } }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => (body += c));
      res.on("end", () => {
        if (res.statusCode !== 200) return reject(new Error(`${path}: ${res.statusCode} ${body.slice(0, 200)}`));
        resolve({ ms: performance.now() - t0, count: (JSON.parse(body) as { count: number }).count });
      });
    });
    req.on("error", reject);
  });
}

/** Writes the archive as the release before search stored it; answers articles per second. */
async function build(dataDir: string): Promise<number> {
  const store = await openEmbeddedArticleStore({ dataDir, durable: false, search: false });
  const t0 = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: 64 }, async () => {
      while (next < n) {
        const i = next++;
        const a = archiveArticle(i, textChars) as { title: string; text: string; externalId: string; url?: string };
        await store.insert({ id: `archive-${i}`, projectId: PROJECT, title: a.title, text: a.text, externalId: a.externalId, url: a.url, isRaw: false, parse: false, voice: "alloy", lang: "en-US", labels: i % 5 ? [] : ["news"], parked: true });
        if (i % 100_000 === 0 && i) process.stderr.write(`  ${i} written\n`);
      }
    }),
  );
  const rate = n / ((performance.now() - t0) / 1000);
  await store.close();
  return rate;
}

/** Two words of article `i` (one from its title, one from its text): a search someone who read it might type. */
function twoWordsOf(i: number): string {
  const a = archiveArticle(i, textChars) as { title: string; text: string };
  const title = wordsOf(a.title).filter((w) => w.length > 3 && !/^\d+$/.test(w) && w !== "archive" && w !== "story");
  const text = wordsOf(a.text).filter((w) => w.length > 3);
  const pick = (ws: string[], k: number) => ws[(k * 2654435761) % ws.length] ?? "news";
  return `${pick(title, i)} ${pick(text, i + 1)}`;
}

/** The commonest words of the archive, every pair once: the costliest two-word searches (a few hundred). */
const COMMON_PAIRS = (() => {
  const top = "the of and to in that was for with his on be at this had not are but from have".split(" ");
  return top.flatMap((a, i) => top.slice(i + 1).map((b) => `${a} ${b}`));
})();

/**
 * p50/p99 over `count` requests, each path asked once: the gateway keeps the answer of a read
 * until the store changes, so a repeated search would measure that cache.
 */
async function figure(base: string, paths: (k: number) => string, count = samples): Promise<{ p50: number; p99: number; medianCount: number }> {
  const ms: number[] = [];
  const counts: number[] = [];
  for (let k = 0; k < count; k++) {
    const r = await get(base, paths(k));
    ms.push(r.ms);
    counts.push(r.count);
  }
  return { p50: quantile(ms, 0.5), p99: quantile(ms, 0.99), medianCount: quantile(counts, 0.5) };
}

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), "bench-search-"));
  const report: Record<string, unknown> = { n, textChars, samples };
  try {
    console.log(`\nsearch at ${n.toLocaleString("en")} articles (${textChars}-character texts), embedded default; load ${load()}`);
    const archive = process.env.BENCH_SEARCH_ARCHIVE ? join(process.env.BENCH_SEARCH_ARCHIVE, `${n}x${textChars}`) : undefined;
    if (archive && existsSync(join(archive, "complete"))) {
      cpSync(archive, dataDir, { recursive: true, filter: (src) => !src.endsWith("complete") });
      console.log(`  archive copied from ${archive}`);
    } else {
      report.buildPerS = Math.round(await build(dataDir));
      if (archive) {
        rmSync(archive, { recursive: true, force: true });
        cpSync(dataDir, archive, { recursive: true });
        writeFileSync(join(archive, "complete"), "");
      }
    }
    const before = dirBytes(dataDir);

    const t0 = performance.now();
    const store = await openEmbeddedArticleStore({ dataDir });
    await store.searchComplete!();
    report.backfillS = Math.round((performance.now() - t0) / 100) / 10;
    report.backfillLoad = load();
    await store.close();
    const after = dirBytes(dataDir);
    report.dataMBBefore = Math.round(before / 2 ** 20);
    report.dataMBAfter = Math.round(after / 2 ** 20);
    report.growth = Math.round(((after - before) / before) * 1000) / 1000;
    console.log(`  upgrade: every article indexed in ${report.backfillS} s (load ${report.backfillLoad}); data ${report.dataMBBefore} MB → ${report.dataMBAfter} MB (+${((report.growth as number) * 100).toFixed(1)} %)`);

    const sys = await startEmbeddedProcess(dataDir);
    try {
      const q = (s: string, extra = "") => `/api/articles?limit=10&q=${encodeURIComponent(s)}${extra}`;
      const rows: Array<[string, { p50: number; p99: number; medianCount: number }]> = [];
      // Warm-up: the code paths of both, with searches none of the figures asks again.
      for (let k = 0; k < 40; k++) await get(sys.url, k % 2 ? `/api/articles?limit=${10 + k}` : q(`warm${k} up${k}`));
      // Each a different page size or offset of the same list, so none is served from the kept answers.
      rows.push(["plain list, first pages (reference)", await figure(sys.url, (k) => `/api/articles?limit=${10 + (k % 91)}&offset=${Math.floor(k / 91)}`)]);
      rows.push(["two words of an article, first page", await figure(sys.url, (k) => q(twoWordsOf((k * 7919) % n)))]);
      rows.push(["the same, status=ready", await figure(sys.url, (k) => q(twoWordsOf((k * 7919) % n), "&status=ready"))]);
      rows.push(["two of the commonest words (worst case)", await figure(sys.url, (k) => q(COMMON_PAIRS[k % COMMON_PAIRS.length]), Math.min(samples, COMMON_PAIRS.length))]);
      const ref = rows[0][1].p99;
      console.log(`  load ${load()}\n  | query | p50 ms | p99 ms | p99 / reference | median count |\n  |---|---|---|---|---|`);
      for (const [name, f] of rows) console.log(`  | ${name} | ${f.p50.toFixed(2)} | ${f.p99.toFixed(2)} | ${(f.p99 / ref).toFixed(1)} | ${f.medianCount} |`);
      report.queries = Object.fromEntries(rows);
      report.queryLoad = load();
    } finally {
      await sys.stop();
    }
    const dir = join(import.meta.dirname, "results");
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "search.json"), `${JSON.stringify(report, null, 2)}\n`);
  } finally {
    agent.destroy();
    if (!process.env.BENCH_SEARCH_KEEP) rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((e: unknown) => {
  process.stderr.write(`${(e as Error).stack ?? String(e)}\n`);
  process.exit(1);
});
