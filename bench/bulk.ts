// Issue 36 benchmark: bulk jobs. A project of 10,000 ready articles starts a
// job regenerating all of them; printed: how long the start takes to answer
// (the job admitted: its filter resolved to 10,000 ids, stored, handed to the
// runner; target < 2 s), and another project's reads (GET by id and the list)
// while the job runs beside the same reads before it, measured in the same run
// (target p99 < 100 ms). `npm start`'s process on a data directory filled
// beforehand (the store opened directly: no audio made), eSpeak, and writes at
// 200 a second per project so the job runs as fast as the service lets it (the
// default of 10 a second would hide its cost).
// Run: npx tsx bench/bulk.ts (also in `npm run bench`, suite `bulk`).
import { mkdirSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { openEmbeddedArticleStore } from "../services/articles/store/open.js";
import { startEmbeddedProcess } from "../test/support/embedded-process.js";
import { quantile } from "./quantile.js";

const HERE = dirname(fileURLToPath(import.meta.url));
const JOB_ARTICLES = Number(process.env.BENCH_BULK_ARTICLES ?? 10_000);
const READER_ARTICLES = 200;
const READ_SECONDS = Number(process.env.BENCH_BULK_READ_SECONDS ?? 15);
const READERS = 4;
const JOB_TOKEN = "bench-bulk-job-token-0123456789";
const READER_TOKEN = "bench-bulk-reader-token-0123456789";

export interface BulkFigures {
  articles: number;
  /** ms from sending the start to its 202, each attempt (a job started, then cancelled, three times; the last left running). */
  admitMs: number[];
  admitMaxMs: number;
  reference: { p50: number; p99: number; requests: number };
  duringJob: { p50: number; p99: number; requests: number };
  p99Ratio: number;
  /** Articles the job got through while the reads were measured, per second. */
  jobArticlesPerSecond: number;
  targets: { admitMs: number; readP99Ms: number };
  ok: boolean;
  loadAverage: number;
}

/** Fills the data directory: the job's project with ready articles, the reader's with a few. */
async function fill(dataDir: string): Promise<string[]> {
  const store = await openEmbeddedArticleStore({ dataDir, durable: false });
  const readerIds: string[] = [];
  const add = async (projectId: string, i: number) => {
    const id = `${projectId}-${i.toString(36)}`;
    const a = await store.insert({ id, projectId, title: `Story ${i}`, text: `A short story number ${i}, read aloud.`, isRaw: false, parse: false, voice: "alloy", lang: "en-US", labels: [] });
    await store.complete(a.id, a.revision, { audio: { key: `${a.id}/1/full.mp3`, duration: 3 } });
    return id;
  };
  for (let i = 0; i < JOB_ARTICLES; i++) await add("job", i);
  for (let i = 0; i < READER_ARTICLES; i++) readerIds.push(await add("reader", i));
  await store.close();
  return readerIds;
}

/** Closed-loop reads of the reader's project for `seconds`: GET by id and the first page of the list in turn; latencies in ms. */
async function reads(url: string, ids: string[], seconds: number): Promise<number[]> {
  const until = Date.now() + seconds * 1000;
  const times: number[] = [];
  let n = 0;
  const headers = { authorization: `Bearer ${READER_TOKEN}` };
  await Promise.all(
    Array.from({ length: READERS }, async () => {
      while (Date.now() < until) {
        const i = n++;
        const path = i % 2 ? `/api/articles/${ids[i % ids.length]}` : "/api/articles?limit=10";
        const t0 = performance.now();
        const res = await fetch(url + path, { headers });
        await res.arrayBuffer();
        if (res.status !== 200) throw new Error(`GET ${path}: ${res.status}`);
        times.push(performance.now() - t0);
      }
    }),
  );
  return times;
}

const summary = (xs: number[]) => ({ p50: Math.round(quantile(xs, 0.5) * 10) / 10, p99: Math.round(quantile(xs, 0.99) * 10) / 10, requests: xs.length });

async function call(url: string, method: string, path: string, body?: unknown): Promise<{ status: number; json: any }> {
  const res = await fetch(url + path, { method, headers: { authorization: `Bearer ${JOB_TOKEN}`, "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: res.status, json: await res.json() };
}

export async function measureBulk(): Promise<BulkFigures> {
  const dataDir = await mkdtemp(join(tmpdir(), "bench-bulk-"));
  try {
    process.stdout.write(`bulk jobs: filling ${JOB_ARTICLES} ready articles… `);
    const readerIds = await fill(dataDir);
    const sys = await startEmbeddedProcess(dataDir, {
      SEED_TOKENS: JSON.stringify([
        { token: JOB_TOKEN, project: "job", scope: "full" },
        { token: READER_TOKEN, project: "reader", scope: "read" },
      ]),
      LOCAL_ENGINES: "espeak",
      RATE_LIMIT_WRITES_PER_SECOND: "200",
      RATE_LIMIT_WRITES_BURST: "200",
    });
    try {
      await reads(sys.url, readerIds, 2); // warm-up
      const reference = await reads(sys.url, readerIds, READ_SECONDS);
      const admitMs: number[] = [];
      let jobId = "";
      for (let attempt = 0; attempt < 3; attempt++) {
        if (jobId) await call(sys.url, "DELETE", `/api/jobs/${jobId}`);
        const t0 = performance.now();
        const r = await call(sys.url, "POST", "/api/articles/bulk", { action: "regenerate", filter: {} });
        admitMs.push(Math.round(performance.now() - t0));
        if (r.status !== 202) throw new Error(`start: ${r.status} ${JSON.stringify(r.json)}`);
        jobId = r.json.id;
      }
      const before = (await call(sys.url, "GET", `/api/jobs/${jobId}`)).json.job;
      const t0 = Date.now();
      const during = await reads(sys.url, readerIds, READ_SECONDS);
      const after = (await call(sys.url, "GET", `/api/jobs/${jobId}`)).json.job;
      const jobArticlesPerSecond = Math.round(((after.done + after.failed - before.done - before.failed) * 1000) / (Date.now() - t0));
      await call(sys.url, "DELETE", `/api/jobs/${jobId}`);
      const ref = summary(reference);
      const dur = summary(during);
      const figures: BulkFigures = {
        articles: JOB_ARTICLES,
        admitMs,
        admitMaxMs: Math.max(...admitMs),
        reference: ref,
        duringJob: dur,
        p99Ratio: Math.round((dur.p99 / ref.p99) * 100) / 100,
        jobArticlesPerSecond,
        targets: { admitMs: 2_000, readP99Ms: 100 },
        ok: Math.max(...admitMs) < 2_000 && dur.p99 < 100,
        loadAverage: Math.round(os.loadavg()[0] * 100) / 100,
      };
      return figures;
    } finally {
      await sys.stop();
    }
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
}

export function formatBulk(f: BulkFigures): string {
  return [
    `bulk job of ${f.articles} regenerations on the embedded default (load average ${f.loadAverage}):`,
    `  admitted (POST /api/articles/bulk → 202): ${f.admitMs.join(", ")} ms (target < ${f.targets.admitMs} ms)`,
    `  another project's reads, p50 / p99: ${f.reference.p50} / ${f.reference.p99} ms before, ${f.duringJob.p50} / ${f.duringJob.p99} ms while the job runs (×${f.p99Ratio} at p99; target < ${f.targets.readP99Ms} ms); ${f.duringJob.requests} reads`,
    `  the job meanwhile: ${f.jobArticlesPerSecond} articles/s (writes limit 200/s)`,
    `  ${f.ok ? "OK" : "MISSED"}`,
  ].join("\n");
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const f = await measureBulk();
  console.log(`done\n${formatBulk(f)}`);
  mkdirSync(join(HERE, "results"), { recursive: true });
  writeFileSync(join(HERE, "results", "bulk.json"), JSON.stringify(f, null, 2));
}
