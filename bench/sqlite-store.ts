// The embedded article store on SQLite at scale, without HTTP: durable
// inserts per second (one at a time and many in flight), the pages one insert
// writes to the log, GET-by-id-style lookups, data size against the raw text,
// and the RSS of a fresh process holding the articles. Usage: tsx bench/sqlite-store.ts [N=100000] [dir]
// (a given dir is kept and reused: its articles are not inserted again).
import { execFileSync } from "node:child_process";
import { closeSync, mkdtempSync, openSync, readdirSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { walFrames } from "../lib/store/sqlite-database.js";
import { openEmbeddedArticleStore } from "../services/articles/store/open.js";
import type { ArticleStore } from "../services/articles/store/port.js";

const WORDS = "the of and to in a is that for it as was with be by on not he this are or his from at which but have an they you were her she there".split(" ");
const textOf = (i: number) => {
  let s = "";
  for (let k = i; s.length < 1_000; k = (k * 1103515245 + 12345) % 2 ** 31) s += `${WORDS[k % WORDS.length]} `;
  return s.slice(0, 1_000);
};
const article = (i: number) => ({ id: `a${String(i).padStart(8, "0")}`, projectId: `p${i % 10}`, title: `Article ${i}`, text: textOf(i), voice: "alloy", lang: "en-US", labels: ["news"], isRaw: false, parse: false });
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];
const dirSize = (dir: string): number => readdirSync(dir, { recursive: true, withFileTypes: true }).reduce((n, e) => n + (e.isFile() ? statSync(path.join(e.parentPath, e.name)).size : 0), 0);

async function fill(store: ArticleStore, from: number, to: number, inFlight: number): Promise<number> {
  const t0 = performance.now();
  let next = from;
  await Promise.all(Array.from({ length: inFlight }, async () => {
    while (next < to) await store.insert(article(next++));
  }));
  return ((to - from) / (performance.now() - t0)) * 1000;
}

/**
 * Pages one durable insert writes to the write-ahead log (the median over `count` inserts one at a
 * time): what a create's commit costs is mostly these pages, a write each. An insert across which
 * a checkpoint emptied the log is not counted.
 */
async function pagesPerInsert(store: ArticleStore, dataDir: string, from: number, count: number): Promise<number> {
  const fd = openSync(path.join(dataDir, "articles", "articles.sqlite-shm"), "r");
  try {
    const per: number[] = [];
    for (let i = from; i < from + count; i++) {
      const before = walFrames(fd);
      await store.insert(article(i));
      const after = walFrames(fd);
      if (after > before) per.push(after - before);
    }
    return pct(per, 50);
  } finally {
    closeSync(fd);
  }
}

async function holder(dataDir: string, n: number): Promise<void> {
  // A fresh process: what a restart costs in memory, then after serving lookups and list pages.
  const t0 = performance.now();
  const store = await openEmbeddedArticleStore({ dataDir });
  const openMs = performance.now() - t0;
  const rssOpen = process.memoryUsage().rss;
  const lat: number[] = [];
  for (let k = 0; k < 20_000; k++) {
    const i = (k * 7919) % n;
    const s = performance.now();
    const a = await store.get(`p${i % 10}`, `a${String(i).padStart(8, "0")}`);
    lat.push(performance.now() - s);
    if (!a) throw new Error(`missing article ${i}`);
  }
  // A few list pages only: without a listing index in the embedded layout yet, each one scans the project.
  for (let k = 0; k < 5; k++) await store.list(`p${k % 10}`, 100, k * 100);
  console.log(JSON.stringify({ openMs: Math.round(openMs), rssOpenMB: Math.round(rssOpen / 2 ** 20), rssServedMB: Math.round(process.memoryUsage().rss / 2 ** 20), getP50Ms: pct(lat, 50), getP99Ms: pct(lat, 99) }));
  await store.close();
}

async function main(): Promise<void> {
  if (process.argv[2] === "--hold") return holder(process.argv[3], Number(process.argv[4]));
  const n = Number(process.argv[2] ?? 100_000);
  const dataDir = process.argv[3] ?? mkdtempSync(path.join(tmpdir(), "bench-sqlite-"));
  const store = await openEmbeddedArticleStore({ dataDir });
  const have = (await store.list("p0", 1, 0)).count * 10;
  if (have < n) {
    const single = await fill(store, have, have + 300, 1);
    const pages = await pagesPerInsert(store, dataDir, have + 300, 100);
    // The commits run on the event loop (synchronous API): how long they hold it is what other requests wait.
    const stalls = monitorEventLoopDelay({ resolution: 1 });
    stalls.enable();
    const concurrent = await fill(store, have + 400, have + 10_300, 64);
    stalls.disable();
    const ms = (ns: number) => +(ns / 1e6).toFixed(1);
    console.log(JSON.stringify({ insertsPerSecSingle: Math.round(single), logPagesPerSingleInsert: pages, insertsPerSecConcurrent64: Math.round(concurrent), loopDelayP50Ms: ms(stalls.percentile(50)), loopDelayP99Ms: ms(stalls.percentile(99)), loopDelayMaxMs: ms(stalls.max) }));
    await fill(store, have + 10_300, n, 256);
  }
  await store.close();
  const bytes = dirSize(path.join(dataDir, "articles"));
  console.log(JSON.stringify({ n, dataDir, dataMB: +(bytes / 2 ** 20).toFixed(1), bytesPer1000Docs: Math.round((bytes / n) * 1000), rawTextPer1000Docs: 1_000_000, ratioToRawText: +(bytes / (n * 1000)).toFixed(2) }));
  execFileSync(process.execPath, ["--import", "tsx", new URL(import.meta.url).pathname, "--hold", dataDir, String(n)], { stdio: "inherit" });
}

await main();
