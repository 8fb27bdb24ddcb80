// Memory of the embedded default (issue 22: RSS ≤ 300 MB after start and while
// serving). Starts `npm start`'s process on a fresh DATA_DIR, reads its RSS once
// it answers /healthz and has settled, then drives a fixed small load (creates
// rendered by the local engine, GET by id, list pages, player lookups, audio
// downloads, then GET by id from 20 connections for a few seconds) while
// sampling RSS, and reports the peak (VmHWM: worker threads and WASM memory
// included, they live in the same process).
//
//   npx tsx bench/embedded-memory.ts
//
// Environment: BENCH_MEMORY_ARTICLES (articles created and rendered, default 4),
// BENCH_MEMORY_CHARS (characters per article, default 3,000),
// BENCH_MEMORY_LOAD_S (seconds of concurrent GET by id, default 8),
// BENCH_MEMORY_NODE_ARGS (extra Node flags for the system, for experiments).
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import http from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { EMBEDDED_TOKEN as TOKEN, memoryOf, settledRss, startEmbeddedProcess, treeMemoryOf } from "../test/support/embedded-process.js";
const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });

export interface EmbeddedMemory {
  node: string;
  /** RSS once /healthz answers and the process has been idle for a moment. */
  afterStartMb: number;
  /** Highest RSS sampled, and the kernel's high-water mark, through the load. */
  loadPeakMb: number;
  peakMb: number;
  /** RSS once the load is over and the process has been idle again. */
  afterLoadMb: number;
  articles: number;
  chars: number;
  /** Requests answered by the concurrent GET phase. */
  getRequests: number;
}

function request(base: string, method: string, path: string, body?: string, headers: Record<string, string> = {}): Promise<{ status: number; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const h: Record<string, string> = { authorization: `Bearer ${TOKEN}`, ...headers };
    if (body !== undefined) h["content-type"] = "application/json";
    const req = http.request(`${base}${path}`, { method, agent, headers: h }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(body);
  });
}

async function json<T>(base: string, method: string, path: string, body?: unknown): Promise<T> {
  const res = await request(base, method, path, body === undefined ? undefined : JSON.stringify(body));
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${res.body.toString().slice(0, 300)}`);
  return JSON.parse(res.body.toString()) as T;
}

const WORDS = "the council approved a new budget for schools and roads after a long debate on taxes while residents asked about parks trains housing and the harbour which reopened last spring".split(" ");
function text(i: number, chars: number): string {
  let x = (i + 7) * 2654435761;
  const out: string[] = [];
  let length = 0;
  while (length < chars) {
    const words = Array.from({ length: 12 }, () => WORDS[(x = (x * 1103515245 + 12345) >>> 0) % WORDS.length]).join(" ");
    const s = `${words[0].toUpperCase()}${words.slice(1)}.`;
    out.push(s);
    length += s.length + 1;
  }
  return out.join(" ");
}

/** GET by id from `connections` keep-alive clients for `seconds` (autocannon in its own process, bench/load.mjs). */
async function getLoad(url: string, ids: string[], seconds: number, connections = 20): Promise<number> {
  const job = { url, connections, duration: seconds, kind: "getById", token: TOKEN, ids };
  const child = spawn(process.execPath, [fileURLToPath(new URL("./load.mjs", import.meta.url))], { env: { ...process.env, BENCH_LOAD: JSON.stringify(job) }, stdio: ["ignore", "pipe", "inherit"] });
  let out = "";
  child.stdout!.on("data", (d: Buffer) => (out += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
  if (code !== 0) throw new Error(`load generator exited with ${code}`);
  const r = JSON.parse(out.trim().split("\n").pop()!) as { total: number; non2xx: number; errors: number };
  if (r.non2xx || r.errors) throw new Error(`GET load: ${r.non2xx} non-2xx, ${r.errors} errors of ${r.total}`);
  return r.total;
}

export async function measureEmbeddedMemory(opts: { articles?: number; chars?: number; loadSeconds?: number; nodeArgs?: string[]; env?: NodeJS.ProcessEnv } = {}): Promise<EmbeddedMemory> {
  const articles = opts.articles ?? 4;
  const loadSeconds = opts.loadSeconds ?? 8;
  const chars = opts.chars ?? 3_000;
  const dataDir = mkdtempSync(join(tmpdir(), "embedded-memory-"));
  const sys = await startEmbeddedProcess(dataDir, opts.env, opts.nodeArgs);
  const pid = sys.child.pid!;
  try {
    const afterStartMb = await settledRss(pid);
    let getRequests = 0;
    // With the private memory of what the process started (the native speech host): what the system holds.
    let loadPeakMb = treeMemoryOf(pid).rss;
    const sampler = setInterval(() => {
      try {
        loadPeakMb = Math.max(loadPeakMb, treeMemoryOf(pid).rss);
      } catch {
        // exited; the load's requests report it
      }
    }, 50);
    try {
      const base = sys.url;
      const player = await json<{ publicKey: string }>(base, "GET", "/api/player");
      // Creates first, all at once: their renders overlap with the reads below.
      const ids: string[] = [];
      for (let i = 0; i < articles; i++) {
        const created = await json<{ id: string }>(base, "POST", "/api/articles", { title: `Memory story ${i}`, text: text(i, chars), externalId: `memory-${i}` });
        ids.push(created.id);
      }
      // Kokoro reads about 15 characters per CPU-second on a busy machine: 4 × 3,000 characters
      // take minutes, where eSpeak took seconds.
      const waitS = Math.max(180, Math.ceil((articles * chars) / 15));
      const deadline = Date.now() + waitS * 1000;
      const ready = new Set<string>();
      while (ready.size < ids.length) {
        if (Date.now() > deadline) throw new Error(`audio not ready within ${waitS} s (${ready.size}/${ids.length})`);
        for (const id of ids) {
          if (ready.has(id)) continue;
          const { article } = await json<{ article: { status: string; error?: string } }>(base, "GET", `/api/articles/${id}`);
          if (article.status === "ready") ready.add(id);
          else if (article.status === "errored") throw new Error(`article ${id} errored: ${article.error}`);
        }
        await json(base, "GET", "/api/articles?limit=20");
        await new Promise((r) => setTimeout(r, 200));
      }
      for (let round = 0; round < 50; round++) {
        const id = ids[round % ids.length];
        const { article } = await json<{ article: { audio?: string } }>(base, "GET", `/api/articles/${id}`);
        await json(base, "GET", "/api/articles?limit=100");
        await json(base, "GET", `/player/v1/article?key=${encodeURIComponent(player.publicKey)}&id=${id}`);
        if (round % 10 === 0) {
          const feed = await request(base, "GET", `/feeds/${player.publicKey}.xml`);
          if (feed.status !== 200) throw new Error(`feed: ${feed.status}`);
        }
        if (round < ids.length) {
          if (!article.audio) throw new Error(`article ${id} is ready without audio`);
          const file = await request(base, "GET", new URL(article.audio).pathname);
          if (file.status !== 200) throw new Error(`audio of ${id}: ${file.status}`);
        }
      }
      if (loadSeconds > 0) getRequests = await getLoad(base, ids, loadSeconds);
    } finally {
      clearInterval(sampler);
    }
    const afterLoadMb = await settledRss(pid);
    return { node: process.version, afterStartMb, loadPeakMb, peakMb: memoryOf(pid).peak, afterLoadMb, articles, chars, getRequests };
  } finally {
    await sys.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

export const formatEmbeddedMemory = (r: EmbeddedMemory) =>
  `embedded default memory (Node ${r.node}): RSS after start ${r.afterStartMb.toFixed(0)} MB; ` +
  `under load (${r.articles} × ${r.chars} chars rendered, GET/list/player/audio, then ${r.getRequests} GETs from 20 connections) peak ${r.loadPeakMb.toFixed(0)} MB sampled (with the speech host), ${r.peakMb.toFixed(0)} MB high-water; ` +
  `after the load ${r.afterLoadMb.toFixed(0)} MB (issue 22: at most 300 MB after start and while serving)`;

const isMain = process.argv[1]?.endsWith("embedded-memory.ts");
if (isMain) {
  const nodeArgs = (process.env.BENCH_MEMORY_NODE_ARGS ?? "").split(" ").filter(Boolean);
  const r = await measureEmbeddedMemory({
    articles: Number(process.env.BENCH_MEMORY_ARTICLES ?? 4),
    chars: Number(process.env.BENCH_MEMORY_CHARS ?? 3_000),
    loadSeconds: Number(process.env.BENCH_MEMORY_LOAD_S ?? 8),
    nodeArgs,
  });
  console.log(formatEmbeddedMemory(r));
}
