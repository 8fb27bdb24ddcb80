// Issue 35 benchmark: what polling a source costs us. (a) A poll of an
// unchanged feed: the conditional GET answered 304 by a server in another
// process (its CPU is not ours), then the source's new state written with the
// lease's release; target < 5 ms of CPU. Reference in the same run: the bare
// safeFetch of the same 304. (b) The parse of a 100-item RSS 2.0 feed (full
// text of ~1,500 characters per item) into items, target < 50 ms; reference:
// JSON.parse of the same items as a JSON Feed. Medians of BENCH_SOURCE_RUNS rounds.
// Run: npx tsx bench/source-poll.ts (also in `npm run bench`, suite `sources`).
import { fork } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import os from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { logger } from "../lib/log.js";
import { allowPrivateFrom } from "../lib/net/allow-list.js";
import { safeFetch } from "../lib/net/safe-fetch.js";
import { openEmbeddedSourceStore } from "../services/articles/sources/open.js";
import { parseFeed } from "../services/articles/sources/parse-feed.js";
import { DEFAULT_SOURCE_LIMITS, pollSource, type PollDeps } from "../services/articles/sources/poll.js";
import type { SourceDoc } from "../services/articles/sources/port.js";
import { jsonFeed, rssFeed } from "../test/sources/feeds.js";

const HERE = dirname(fileURLToPath(import.meta.url));

export interface SourcePollFigures {
  /** CPU ms of one poll answered 304, state written. */
  unchangedPollCpuMs: number;
  /** Reference: CPU ms of the bare conditional GET. */
  bareFetchCpuMs: number;
  unchangedRatio: number;
  /** CPU ms to parse a 100-item RSS feed. */
  parse100CpuMs: number;
  feedBytes: number;
  /** Reference: JSON.parse of the same items. */
  jsonParseCpuMs: number;
  parseRatio: number;
  targets: { unchangedPollMs: number; parse100Ms: number };
  ok: boolean;
  loadAverage: number;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];
const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

/** A server in another process that answers every request 304. */
async function notModifiedElsewhere(): Promise<{ url: string; port: number; stop: () => void }> {
  const code = `
    const http = require("node:http");
    const s = http.createServer((req, res) => res.writeHead(304, { etag: '"v1"', "last-modified": "Thu, 01 Jan 2026 00:00:00 GMT" }).end());
    s.listen(0, "127.0.0.1", () => process.send(s.address().port));`;
  const child = fork("-e", [code], { execArgv: [], stdio: ["ignore", "inherit", "inherit", "ipc"] });
  const port = await new Promise<number>((resolve, reject) => {
    child.once("message", (p) => resolve(p as number));
    child.once("error", reject);
  });
  return { url: `http://127.0.0.1:${port}/feed.xml`, port, stop: () => child.kill() };
}

async function each(n: number, one: () => unknown): Promise<number> {
  const c0 = cpuMs();
  for (let i = 0; i < n; i++) await one();
  return (cpuMs() - c0) / n;
}

export async function benchSourcePoll(runs = Number(process.env.BENCH_SOURCE_RUNS ?? 5), polls = Number(process.env.BENCH_SOURCE_POLLS ?? 50)): Promise<SourcePollFigures> {
  const server = await notModifiedElsewhere();
  const store = await openEmbeddedSourceStore();
  const fetchOptions = { allowPrivate: allowPrivateFrom(`127.0.0.1:${server.port}`) };
  const now = Date.now();
  const src: SourceDoc = {
    _id: "bench-source", projectId: "bench", url: server.url, pollSeconds: 300, labels: [], mode: "text", backfill: 0, paused: false,
    added: now, since: now, nextPoll: now, seen: 100, created: 0, updated: 0, failures: 0, leaseUntil: 0, primed: true, etag: '"v1"', lastModified: "Thu, 01 Jan 2026 00:00:00 GMT",
  };
  await store.insert(src, 10);
  const unused = () => Promise.reject(new Error("a 304 creates nothing"));
  const deps: PollDeps = {
    store,
    content: { parseFeed: unused },
    writes: { create: unused, createFromPage: unused, update: unused },
    article: unused,
    recrawl: unused,
    defaultVoice: unused,
    fetchOptions,
    limits: DEFAULT_SOURCE_LIMITS,
    log: logger("bench"),
  };
  const poll = async () => {
    const claimed = (await store.claim(src._id, "bench", Date.now(), 60_000, true))!;
    await store.release(src._id, "bench", await pollSource(deps, claimed));
  };
  const bare = () => safeFetch(server.url, { ...fetchOptions, headers: { "if-none-match": '"v1"' } });

  const items = Array.from({ length: 100 }, (_, i) => ({
    id: `urn:bench:${i}`,
    link: `https://news.example/2026/story-${i}`,
    title: `Council approves the library budget, part ${i}`,
    html: `<p>${"The city council approved the budget for public libraries on Tuesday. ".repeat(21)}</p>`,
    date: new Date(Date.UTC(2026, 10, 1) - i * 3_600_000).toISOString(),
  }));
  const rss = rssFeed(items, { lang: "en-US" });
  const json = jsonFeed(items);
  const load = os.loadavg()[0];
  try {
    for (let i = 0; i < 10; i++) {
      await poll();
      await bare();
      parseFeed(rss);
      JSON.parse(json);
    }
    const p: number[] = [];
    const b: number[] = [];
    const x: number[] = [];
    const j: number[] = [];
    for (let r = 0; r < runs; r++) {
      // Interleaved, so a busy phase of the machine weighs on every figure alike.
      b.push(await each(polls, bare));
      p.push(await each(polls, poll));
      j.push(await each(20, () => JSON.parse(json)));
      x.push(await each(20, () => parseFeed(rss)));
    }
    const f = { unchangedPollCpuMs: median(p), bareFetchCpuMs: median(b), parse100CpuMs: median(x), jsonParseCpuMs: median(j) };
    const targets = { unchangedPollMs: 5, parse100Ms: 50 };
    return {
      ...f,
      unchangedRatio: f.unchangedPollCpuMs / f.bareFetchCpuMs,
      feedBytes: Buffer.byteLength(rss),
      parseRatio: f.parse100CpuMs / f.jsonParseCpuMs,
      targets,
      ok: f.unchangedPollCpuMs < targets.unchangedPollMs && f.parse100CpuMs < targets.parse100Ms,
      loadAverage: load,
    };
  } finally {
    await store.close();
    server.stop();
  }
}

export function formatSourcePoll(f: SourcePollFigures): string {
  const ms = (x: number) => `${x.toFixed(2)} ms`;
  return (
    `sources: a poll of an unchanged feed (304, state written) ${ms(f.unchangedPollCpuMs)} CPU against ${ms(f.bareFetchCpuMs)} for the bare conditional GET (× ${f.unchangedRatio.toFixed(1)}), target < ${f.targets.unchangedPollMs} ms; ` +
    `parse of a 100-item RSS feed (${(f.feedBytes / 1024).toFixed(0)} KB) ${ms(f.parse100CpuMs)} against JSON.parse of the same items ${ms(f.jsonParseCpuMs)} (× ${f.parseRatio.toFixed(1)}), target < ${f.targets.parse100Ms} ms: ${f.ok ? "met" : "MISSED"} (load ${f.loadAverage.toFixed(1)})`
  );
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const f = await benchSourcePoll();
  console.log(formatSourcePoll(f));
  mkdirSync(join(HERE, "results"), { recursive: true });
  writeFileSync(join(HERE, "results", "source-poll.json"), `${JSON.stringify(f, null, 2)}\n`);
}
