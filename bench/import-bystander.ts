// What an import does to everyone else (docs/import.md, issue 33): another
// project's GET by id at ~20/s, a third project's single creates
// (POST /api/articles) at 5/s and /livez every 250 ms, measured from this
// process against the embedded default running in its own (bench/sut.ts), first
// with no import (the reference), then during
//   - 100,000 and 1,000,000 invalid lines (`x`) in one import request,
//   - four concurrent valid imports of 20,000 lines (four projects),
//   - N connections trickling an import upload one byte every 300 ms
//     (N = 2,000 or what the descriptor limit allows), with the server's open
//     descriptors counted before, during and after,
//   - two concurrent imports of 3,000 valid lines by one project (`two`: the
//     test's scenario, test/e2e/import-scenarios.ts).
// BENCH_SYSTEM=stack runs the full stack instead (bench/sut.ts stack: MongoDB
// stand-in, NATS, one process per service); there the writer's creates are
// admitted and rendered as the test's are, and `trickle` is left out (it counts
// the descriptors of the process the bench started, not the gateway's).
// Usage: npx tsx bench/import-bystander.ts [phases, comma separated: ref,100k,1m,valid,trickle,two]
import { spawn, type ChildProcess } from "node:child_process";
import { readdirSync } from "node:fs";
import http from "node:http";
import { loadavg } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { quantile } from "./quantile.js";

const HERE = import.meta.dirname;
const PHASES = new Set((process.argv[2] ?? "ref,100k,1m,valid,trickle").split(","));
const tok = (p: string) => `bench-bystander-${p}-0123456789`;
const PROJECTS = ["reader", "writer", "flood", "imp1", "imp2", "imp3", "imp4", "trickle"];
const TRICKLE_WINDOW_S = 2;
const TRICKLE_MIN_RATE = 64;
const SYSTEM = process.env.BENCH_SYSTEM === "stack" ? "stack" : "embedded";

async function startServer(): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, ["--import", "tsx", join(HERE, "sut.ts"), SYSTEM], {
    cwd: join(HERE, ".."),
    env: {
      ...process.env,
      LOG_LEVEL: "warn",
      // Every project's articles are stored waiting: the creates measure the API, not renders.
      BENCH_AUDIO: "onDemand",
      BENCH_SEED_TOKENS: JSON.stringify(PROJECTS.map((p) => ({ token: tok(p), project: p, scope: "full" }))),
      // The import bucket as `npm start` has it (10,000 lines/s), except where a phase says otherwise.
      RATE_LIMIT_IMPORTS_PER_SECOND: process.env.RATE_LIMIT_IMPORTS_PER_SECOND ?? "10000",
      RATE_LIMIT_IMPORTS_BURST: process.env.RATE_LIMIT_IMPORTS_BURST ?? "10000",
      IMPORT_MIN_UPLOAD_BYTES_PER_SECOND: String(TRICKLE_MIN_RATE),
      IMPORT_UPLOAD_WINDOW_SECONDS: String(TRICKLE_WINDOW_S),
      IMPORT_MAX_OPEN: "4000",
    },
    stdio: ["pipe", "pipe", "inherit"],
  });
  const url = await new Promise<string>((resolve, reject) => {
    const rl = createInterface({ input: child.stdout! });
    rl.on("line", (line) => {
      if (line.startsWith("READY ")) resolve((JSON.parse(line.slice(6)) as { url: string }).url);
      else if (line.startsWith("SKIP")) reject(new Error(line));
    });
    child.once("exit", (code) => reject(new Error(`server exited ${code}`)));
  });
  return { url, child };
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });

function get(url: string, token?: string): Promise<number> {
  return new Promise((resolve) => {
    const t0 = performance.now();
    const req = http.get(url, { agent, headers: token ? { authorization: `Bearer ${token}` } : {} }, (res) => {
      res.resume();
      res.on("end", () => resolve(performance.now() - t0));
    });
    req.on("error", () => resolve(performance.now() - t0));
  });
}

/** One single create of the writer project; resolves to its latency (a failure counts as NaN). */
function post(base: string, n: number): Promise<number> {
  return new Promise((resolve) => {
    const t0 = performance.now();
    const body = JSON.stringify({ title: `Bystander create ${n}`, text: `A short article the writer project publishes while others import, number ${n}.` });
    const u = new URL(`${base}/api/articles`);
    const req = http.request(
      { host: u.hostname, port: u.port, path: u.pathname, method: "POST", agent, headers: { authorization: `Bearer ${tok("writer")}`, "content-type": "application/json", "content-length": Buffer.byteLength(body) } },
      (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode === 200 ? performance.now() - t0 : NaN));
      },
    );
    req.on("error", () => resolve(NaN));
    req.end(body);
  });
}

/** Bystander reads (20/s), single creates of another project (5/s) and /livez probes (4/s) while `work` runs. */
async function bystander(base: string, articleId: string, work: () => Promise<unknown>) {
  const reads: Promise<number>[] = [];
  const creates: Promise<number>[] = [];
  const probes: Promise<number>[] = [];
  const r = setInterval(() => reads.push(get(`${base}/api/articles/${articleId}`, tok("reader"))), 50);
  const c = setInterval(() => creates.push(post(base, creates.length)), 200);
  const p = setInterval(() => probes.push(get(`${base}/livez`)), 250);
  const t0 = performance.now();
  await work();
  const seconds = (performance.now() - t0) / 1000;
  clearInterval(r);
  clearInterval(c);
  clearInterval(p);
  const rs = await Promise.all(reads);
  const cs = await Promise.all(creates);
  const ok = cs.filter((ms) => !Number.isNaN(ms));
  const ps = await Promise.all(probes);
  return {
    seconds,
    n: rs.length,
    p50: quantile(rs, 0.5),
    p99: quantile(rs, 0.99),
    max: Math.max(...rs),
    creates: { n: cs.length, failed: cs.length - ok.length, p50: quantile(ok, 0.5), p99: quantile(ok, 0.99), max: Math.max(...ok) },
    livezMax: Math.max(...ps),
  };
}

/** One import request with this body; resolves to its last answer line. */
function importBody(base: string, token: string, body: Buffer): Promise<string> {
  return new Promise((resolve, reject) => {
    const u = new URL(`${base}/api/articles/import?audio=onDemand`);
    const req = http.request({ host: u.hostname, port: u.port, path: u.pathname + u.search, method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/x-ndjson" } }, (res) => {
      let tail = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => (tail = (tail + c).slice(-400)));
      res.on("end", () => resolve(`${res.statusCode} ${tail.trim().split("\n").at(-1)}`));
    });
    req.on("error", reject);
    for (let i = 0; i < body.length; i += 64 * 1024) req.write(body.subarray(i, i + 64 * 1024));
    req.end();
  });
}

const fdsOf = (pid: number) => readdirSync(`/proc/${pid}/fd`).length;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const fmt = (s: Awaited<ReturnType<typeof bystander>>, ref?: Awaited<ReturnType<typeof bystander>>) =>
  `reads n=${s.n} p50 ${s.p50.toFixed(1)} ms, p99 ${s.p99.toFixed(1)} ms, max ${s.max.toFixed(0)} ms` +
  (ref ? ` (p99 ${(s.p99 / ref.p99).toFixed(1)}x the reference)` : "") +
  `; creates n=${s.creates.n}${s.creates.failed ? ` (${s.creates.failed} failed)` : ""} p50 ${s.creates.p50.toFixed(1)} ms, p99 ${s.creates.p99.toFixed(1)} ms, max ${s.creates.max.toFixed(0)} ms` +
  (ref ? ` (p99 ${(s.creates.p99 / ref.creates.p99).toFixed(1)}x the reference)` : "") +
  `; /livez max ${s.livezMax.toFixed(0)} ms; ${s.seconds.toFixed(1)} s`;

async function trickle(base: string, pid: number, n: number) {
  const baseline = fdsOf(pid);
  const sockets: http.ClientRequest[] = [];
  const statuses = new Map<number, number>();
  let ended = 0;
  for (let i = 0; i < n; i++) {
    const u = new URL(`${base}/api/articles/import`);
    const req = http.request({ host: u.hostname, port: u.port, path: u.pathname, method: "POST", agent: false, headers: { authorization: `Bearer ${tok("trickle")}`, "content-type": "application/x-ndjson" } }, (res) => {
      statuses.set(res.statusCode ?? 0, (statuses.get(res.statusCode ?? 0) ?? 0) + 1);
      res.resume();
      res.on("close", () => ended++);
    });
    req.on("error", () => ended++);
    req.flushHeaders();
    sockets.push(req);
    if (i % 100 === 99) await sleep(10);
  }
  const timer = setInterval(() => {
    for (const s of sockets) if (!s.destroyed) s.write(" ");
  }, 300);
  let peak = 0;
  const t0 = performance.now();
  let back = NaN;
  const s = await bystander(base, readerId, async () => {
    for (let waited = 0; waited < 30_000; waited += 250) {
      await sleep(250);
      const f = fdsOf(pid);
      peak = Math.max(peak, f);
      if (f <= baseline + 2 && waited > 1_000) {
        back = performance.now() - t0;
        break;
      }
    }
  });
  clearInterval(timer);
  for (const r of sockets) r.destroy();
  console.log(
    `${n} trickling connections (a byte per 300 ms; IMPORT_MIN_UPLOAD_BYTES_PER_SECOND=${TRICKLE_MIN_RATE}, window ${TRICKLE_WINDOW_S} s): ` +
      `statuses ${JSON.stringify(Object.fromEntries(statuses))}, descriptors ${baseline} before, peak ${peak}, ` +
      `${Number.isNaN(back) ? "not back to baseline within 30 s" : `back to baseline after ${(back / 1000).toFixed(1)} s`}; ${fmt(s, ref)}`,
  );
}

const { url, child } = await startServer();
let readerId = "";
let ref: Awaited<ReturnType<typeof bystander>> | undefined;
try {
  const created = await fetch(`${url}/api/articles`, {
    method: "POST",
    headers: { authorization: `Bearer ${tok("reader")}`, "content-type": "application/json" },
    body: JSON.stringify({ title: "Bystander", text: "Read while others import." }),
  });
  readerId = ((await created.json()) as { id: string }).id;
  console.log(`load average ${loadavg()[0].toFixed(1)}; server pid ${child.pid}`);
  for (let i = 0; i < 50; i++) await get(`${url}/api/articles/${readerId}`, tok("reader")); // warm-up
  ref = await bystander(url, readerId, () => sleep(5_000));
  console.log(`${SYSTEM}: reference (no import, load ${loadavg()[0].toFixed(1)}): ${fmt(ref)}`);
  for (const [name, lines] of [
    ["100k", 100_000],
    ["1m", 1_000_000],
  ] as const) {
    if (!PHASES.has(name)) continue;
    const body = Buffer.from("x\n".repeat(lines));
    let last = "";
    const s = await bystander(url, readerId, async () => (last = await importBody(url, tok("flood"), body)));
    console.log(`${lines} invalid lines in one import: ${fmt(s, ref)}; import answered ${last.slice(0, 120)}`);
  }
  if (PHASES.has("valid")) {
    const filler = "The council met on Tuesday to discuss the library budget and the schedule for repairs. ".repeat(4);
    const bodyOf = (p: string) => Buffer.from(Array.from({ length: 20_000 }, (_, i) => JSON.stringify({ title: `${p} ${i}`, text: `${i} ${filler}`, externalId: `${p}-${i}` })).join("\n") + "\n");
    const bodies = ["imp1", "imp2", "imp3", "imp4"].map((p) => [p, bodyOf(p)] as const);
    let lasts: string[] = [];
    const s = await bystander(url, readerId, async () => (lasts = await Promise.all(bodies.map(([p, b]) => importBody(url, tok(p), b)))));
    console.log(`four concurrent imports of 20,000 valid lines: ${fmt(s, ref)}; answers ${lasts.map((l) => l.slice(0, 60)).join(" | ")}`);
  }
  if (PHASES.has("two")) {
    const filler = "The council met on Tuesday to discuss the library budget and the schedule for repairs. ".repeat(3);
    const bodyOf = (n: number) => Buffer.from(Array.from({ length: 3_000 }, (_, i) => JSON.stringify({ title: `Bulk ${n} ${i}`, text: `${i} ${filler}` })).join("\n") + "\n");
    const bodies = [bodyOf(1), bodyOf(2)];
    let lasts: string[] = [];
    const s = await bystander(url, readerId, async () => (lasts = await Promise.all(bodies.map((b) => importBody(url, tok("imp1"), b)))));
    console.log(`two imports of 3,000 valid lines, one project (load ${loadavg()[0].toFixed(1)}): ${fmt(s, ref)}; answers ${lasts.map((l) => l.slice(0, 60)).join(" | ")}`);
  }
  if (PHASES.has("trickle") && SYSTEM === "embedded") {
    const limit = Number(process.env.BENCH_TRICKLE ?? 2_000);
    await trickle(url, child.pid!, limit);
  }
} finally {
  agent.destroy();
  child.kill("SIGTERM");
}
