// Issue 35 benchmark: what creating an article from its URL costs us per page.
// A 50 KB article page (head metadata, menus, teasers, ads around a ~6,000-
// character article) is served by a loopback server in another process, so
// its CPU is not ours; each page is fetched through safeFetch, decoded, and
// extracted with its date, language and canonical URL (a) on this thread and
// (b) through the content pool's worker threads, as the articles service does.
// Printed: CPU per page (this process, all threads; median of
// BENCH_PAGE_RUNS rounds of BENCH_PAGES pages; target < 150 ms), beside the
// reference measured in the same run: linkedom's bare parse of the same page.
// Run: npx tsx bench/page-fetch.ts (also in `npm run bench`, suite `pages`).
import { fork } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import os from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseHTML } from "linkedom";
import { allowPrivateFrom } from "../lib/net/allow-list.js";
import { safeFetch } from "../lib/net/safe-fetch.js";
import { decodeBody } from "../lib/net/text-body.js";
import { PAGE_FETCH_OPTIONS } from "../services/articles/admission/recrawl.js";
import { extractPageLimited } from "../services/articles/content/analyse.js";
import { CONTENT_LIMITS } from "../services/articles/content/limits.js";
import { createContentPool } from "../services/articles/content/pool.js";
import { articlePageHtml, newsParagraphs } from "../test/support/article-pages.js";

const HERE = dirname(fileURLToPath(import.meta.url));

export interface PageFetchFigures {
  pageBytes: number;
  textChars: number;
  /** CPU ms per page, this thread: fetch + decode + extraction with metadata. */
  inlineCpuMs: number;
  /** CPU ms per page through the content pool (all threads of the process). */
  pooledCpuMs: number;
  /** Wall ms per page through the pool, one at a time. */
  pooledWallMs: number;
  /** Reference: CPU ms of linkedom's parse alone of the same page. */
  parseCpuMs: number;
  inlineRatio: number;
  pooledRatio: number;
  target: number;
  ok: boolean;
  loadAverage: number;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];
const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

/** Serves `html` from a child process on a loopback port; answers its URL and a stop function. */
async function serveElsewhere(html: string): Promise<{ url: string; port: number; stop: () => void }> {
  const code = `
    const http = require("node:http");
    let body;
    process.on("message", (m) => {
      body = Buffer.from(m, "utf8");
      const s = http.createServer((req, res) => res.writeHead(200, { "content-type": "text/html; charset=utf-8", "content-length": body.length }).end(body));
      s.listen(0, "127.0.0.1", () => process.send(s.address().port));
    });`;
  const child = fork("-e", [code], { execArgv: [], stdio: ["ignore", "inherit", "inherit", "ipc"] });
  const port = await new Promise<number>((resolve, reject) => {
    child.once("message", (p) => resolve(p as number));
    child.once("error", reject);
    child.send(html);
  });
  return { url: `http://127.0.0.1:${port}/news/harbour-reopens`, port, stop: () => child.kill() };
}

async function perPage(pages: number, one: () => Promise<unknown>): Promise<{ cpu: number; wall: number }> {
  const cpu0 = cpuMs();
  const wall0 = performance.now();
  for (let i = 0; i < pages; i++) await one();
  return { cpu: (cpuMs() - cpu0) / pages, wall: (performance.now() - wall0) / pages };
}

export async function benchPageFetch(pages = Number(process.env.BENCH_PAGES ?? 20), runs = Number(process.env.BENCH_PAGE_RUNS ?? 5)): Promise<PageFetchFigures> {
  const html = articlePageHtml({
    title: "Harbour reopens after two years of repairs",
    paragraphs: newsParagraphs(6_000),
    lang: "en",
    jsonLdDate: "2026-11-03T08:15:00+01:00",
    canonical: "https://news.example/harbour-reopens",
    padTo: 50_000,
  });
  const server = await serveElsewhere(html);
  const fetchOptions = { ...PAGE_FETCH_OPTIONS, allowPrivate: allowPrivateFrom(`127.0.0.1:${server.port}`) };
  const limits = { maxDepth: CONTENT_LIMITS.maxDepth, maxOutputChars: CONTENT_LIMITS.maxOutputChars };
  const pool = createContentPool();
  let textChars = 0;
  const inline = async () => {
    const res = await safeFetch(server.url, fetchOptions);
    textChars = extractPageLimited(decodeBody(res.body, res.headers.get("content-type")), res.url, limits).text.length;
  };
  const pooled = async () => {
    const res = await safeFetch(server.url, fetchOptions);
    await pool.extractPage("bench", decodeBody(res.body, res.headers.get("content-type")), res.url);
  };
  const parse = async () => void parseHTML(html);
  const load = os.loadavg()[0];
  try {
    // Warm-up: JIT, the pool's threads, the first connections.
    for (const f of [inline, pooled, parse]) await perPage(5, f);
    const inl: number[] = [];
    const poo: number[] = [];
    const pooWall: number[] = [];
    const ref: number[] = [];
    for (let r = 0; r < runs; r++) {
      // Interleaved, so a busy phase of the machine weighs on every figure alike.
      ref.push((await perPage(pages, parse)).cpu);
      inl.push((await perPage(pages, inline)).cpu);
      const p = await perPage(pages, pooled);
      poo.push(p.cpu);
      pooWall.push(p.wall);
    }
    const parseCpuMs = median(ref);
    const inlineCpuMs = median(inl);
    const pooledCpuMs = median(poo);
    const target = 150;
    return {
      pageBytes: Buffer.byteLength(html),
      textChars,
      inlineCpuMs,
      pooledCpuMs,
      pooledWallMs: median(pooWall),
      parseCpuMs,
      inlineRatio: inlineCpuMs / parseCpuMs,
      pooledRatio: pooledCpuMs / parseCpuMs,
      target,
      ok: Math.max(inlineCpuMs, pooledCpuMs) < target,
      loadAverage: load,
    };
  } finally {
    await pool.close();
    server.stop();
  }
}

export function formatPageFetch(f: PageFetchFigures): string {
  const ms = (x: number) => `${x.toFixed(1)} ms`;
  return (
    `create from a URL, ${(f.pageBytes / 1024).toFixed(0)} KB page → ${f.textChars} characters: CPU per page ${ms(f.inlineCpuMs)} on one thread, ` +
    `${ms(f.pooledCpuMs)} through the content pool (${ms(f.pooledWallMs)} wall); linkedom's parse alone ${ms(f.parseCpuMs)} ` +
    `(× ${f.inlineRatio.toFixed(1)} / × ${f.pooledRatio.toFixed(1)}); target < ${f.target} ms: ${f.ok ? "met" : "MISSED"} (load ${f.loadAverage.toFixed(1)})`
  );
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const f = await benchPageFetch();
  console.log(formatPageFetch(f));
  mkdirSync(join(HERE, "results"), { recursive: true });
  writeFileSync(join(HERE, "results", "page-fetch.json"), `${JSON.stringify(f, null, 2)}\n`);
}
