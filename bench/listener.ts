// `npm run bench:listener` (also part of `npm run bench`): the listener side
// on the embedded default. The player's public lookup by page URL and its
// event beacon against GET /api/articles/:id in the same run (alternating
// runs, median ratio), and the podcast feed of a project with 10,000 ready
// articles: first page uncached and reused, and the 304 of an unchanged feed.
import { spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path, { dirname, join } from "node:path";
import { Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import { startEmbedded } from "../launch/embedded.js";
import { openEmbeddedArticleStore } from "../services/articles/store/open.js";

const HERE = dirname(fileURLToPath(import.meta.url));
const TOKEN = "bench-listener-0123456789abcdef";
const N_FEED = Number(process.env.BENCH_FEED_ARTICLES ?? 10_000);
const DURATION = Number(process.env.BENCH_DURATION ?? 5);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);

interface Load {
  reqPerSec: number;
  p99: number;
  non2xx: number;
  errors: number;
}

function load(job: Record<string, unknown>): Promise<Load> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(HERE, "load.mjs")], {
      env: { ...process.env, BENCH_LOAD: JSON.stringify({ connections: CONNECTIONS, duration: DURATION, token: TOKEN, ...job }) },
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.once("exit", (code) => (code === 0 ? resolve(JSON.parse(out.trim().split("\n").pop()!) as Load) : reject(new Error(`load generator exited with ${code}`))));
  });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function timed(fn: () => Promise<Response>): Promise<{ ms: number; status: number }> {
  const t = performance.now();
  const r = await fn();
  await r.arrayBuffer();
  return { ms: performance.now() - t, status: r.status };
}

async function main(): Promise<void> {
  const dataDir = await mkdtemp(path.join(tmpdir(), "bench-listener-"));
  // 10,000 ready articles written straight into the embedded store, all
  // pointing at one real MP3 (the feed reads each file's size).
  const store = await openEmbeddedArticleStore({ dataDir });
  const key = "feedbench/1/full.mp3";
  await mkdir(path.join(dataDir, "audio", "feedbench", "1"), { recursive: true });
  writeFileSync(path.join(dataDir, "audio", key), Buffer.alloc(48_000, 0xff));
  const t0 = performance.now();
  for (let i = 0; i < N_FEED; i++) {
    const a = await store.insert({ id: `feed-${i}`, projectId: "bench", title: `Feed article ${i}`, text: "Text.", isRaw: false, parse: false, voice: "alloy", lang: "en-US", labels: [], url: `https://news.example/feed/${i}` }, new Date(1_700_000_000_000 + i * 1000));
    await store.claim(a.id, 1);
    await store.complete(a.id, 1, { audio: { key, duration: 61 } });
  }
  await store.close();
  console.log(`seeded ${N_FEED} ready articles in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

  const sink = new Writable({ write: (_c, _e, cb) => cb() });
  // Limits the load cannot reach: the bench measures the work, not the limiters (which stay in the path).
  const roomy = { RATE_LIMIT_READS_PER_SECOND: "100000", RATE_LIMIT_READS_BURST: "1000000", RATE_LIMIT_WRITES_PER_SECOND: "100000", RATE_LIMIT_WRITES_BURST: "1000000", PLAYER_EVENTS_PER_SECOND: "100000", PLAYER_EVENTS_BURST: "1000000", PLAYER_EVENTS_PER_ADDRESS_PER_SECOND: "100000", PLAYER_EVENTS_PER_ADDRESS_BURST: "1000000" };
  const sys = await startEmbedded({ PORT: "0", HOST: "127.0.0.1", DATA_DIR: dataDir, LOG_LEVEL: "warn", SEED_TOKENS: JSON.stringify([{ token: TOKEN, project: "bench", scope: "full" }]), ...roomy }, sink);
  const auth = { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" };
  try {
    const created = (await (await fetch(`${sys.url}/api/articles`, { method: "POST", headers: auth, body: JSON.stringify({ title: "Bench lookup", text: "A short article for the lookup bench.", url: "https://news.example/bench/lookup" }) })).json()) as { id: string };
    for (let i = 0; i < 600; i++) {
      const a = (await (await fetch(`${sys.url}/api/articles/${created.id}`, { headers: auth })).json()) as { article: { status: string } };
      if (a.article.status === "ready") break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const publicKey = ((await (await fetch(`${sys.url}/api/player`, { headers: auth })).json()) as { publicKey: string }).publicKey;
    const job = { url: sys.url, ids: [created.id], publicKey, lookupUrl: "https://news.example/bench/lookup" };

    const rows: Record<string, { reqPerSec: number[]; p99: number[]; ratio: number[]; bad: number }> = {};
    for (let run = 0; run < RUNS; run++) {
      const ref = await load({ ...job, kind: "getById" });
      (rows.getById ??= { reqPerSec: [], p99: [], ratio: [], bad: 0 }).reqPerSec.push(ref.reqPerSec);
      rows.getById.p99.push(ref.p99);
      rows.getById.ratio.push(1);
      rows.getById.bad += ref.non2xx + ref.errors;
      for (const kind of ["listenerLookup", "events"]) {
        const r = await load({ ...job, kind });
        const row = (rows[kind] ??= { reqPerSec: [], p99: [], ratio: [], bad: 0 });
        row.reqPerSec.push(r.reqPerSec);
        row.p99.push(r.p99);
        row.ratio.push(r.reqPerSec / ref.reqPerSec);
        row.bad += r.errors + r.non2xx;
      }
    }

    // Feed: wait out the 5 s reuse between uncached samples.
    const feedUrl = `${sys.url}/feeds/${publicKey}.xml`;
    const cold: number[] = [];
    for (let i = 0; i < 3; i++) {
      await new Promise((r) => setTimeout(r, 5_200));
      cold.push((await timed(() => fetch(feedUrl))).ms);
    }
    const warm: number[] = [];
    for (let i = 0; i < 20; i++) warm.push((await timed(() => fetch(feedUrl))).ms);
    const etag = (await fetch(feedUrl)).headers.get("etag") ?? "";
    const notModified = await timed(() => fetch(feedUrl, { headers: { "if-none-match": etag } }));

    const out = {
      at: new Date().toISOString(),
      connections: CONNECTIONS,
      duration: DURATION,
      cases: Object.fromEntries(Object.entries(rows).map(([k, r]) => [k, { reqPerSec: Math.round(median(r.reqPerSec)), p99: median(r.p99), ratioToGetById: Number(median(r.ratio).toFixed(2)), errors: r.bad }])),
      feed: { articles: N_FEED, firstPageUncachedMs: cold.map((x) => Number(x.toFixed(1))), firstPageReusedMsMedian: Number(median(warm).toFixed(2)), notModified: { status: notModified.status, ms: Number(notModified.ms.toFixed(2)) } },
    };
    console.log("\ncase                          req/s   × GET by id   p99 ms");
    for (const [k, c] of Object.entries(out.cases)) console.log(`${k.padEnd(28)} ${String(c.reqPerSec).padStart(7)}   ${c.ratioToGetById.toFixed(2).padStart(11)}   ${String(c.p99).padStart(6)}`);
    console.log(`feed, ${N_FEED} ready articles: first page uncached ${out.feed.firstPageUncachedMs.join(" / ")} ms; reused ${out.feed.firstPageReusedMsMedian} ms; unchanged → ${notModified.status} in ${out.feed.notModified.ms} ms`);
    mkdirSync(join(HERE, "results"), { recursive: true });
    writeFileSync(join(HERE, "results", "listener.json"), JSON.stringify(out, null, 2));
  } finally {
    await sys.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
