// The read path without a cache (issue 33, point 10): GET /api/articles/:id
// over 10,000 and 1,000 distinct ids, and a 95/5 read/write mix, on the
// embedded default as `npm start` runs it (its Node flags, rate limits on, access log at info)
// and with the access log off (LOG_LEVEL=warn). The reference is a bare Koa
// route answering the very same bodies from memory, by id, with the same ids:
// each measured run follows a reference run, and a ratio is the median of the
// pairs, by req/s and by CPU per request (the reference's CPU per request
// over the system's: the steadier figure on a shared machine).
//
//   npx tsx bench/read-path.ts        (also part of `npm run bench`'s api suite)
//
// Variables: BENCH_READ_IDS (10000), BENCH_READ_TEXT (1200 characters per
// article), BENCH_READ_LEVELS (info,warn), BENCH_READ_CASES (ids10000,ids1000,mix), BENCH_DURATION, BENCH_RUNS, BENCH_WARMUP, BENCH_CONNECTIONS as
// for bench/run.ts. Articles are stored waiting (audio on demand), so the
// mix's writes measure the API, not renders.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { api, createArticles, load, median, npmStartNodeFlags, startSut, type Sut } from "./harness.js";

const num = (name: string, dflt: number) => {
  const v = Number(process.env[name] ?? dflt);
  if (!Number.isFinite(v) || v <= 0) throw new Error(`${name} must be a positive number`);
  return v;
};
const cfg = {
  ids: num("BENCH_READ_IDS", 10_000),
  textChars: num("BENCH_READ_TEXT", 1_200),
  duration: num("BENCH_DURATION", 5),
  runs: num("BENCH_RUNS", 3),
  warmup: num("BENCH_WARMUP", 2),
  /** A directory: a main-thread CPU profile of the system's measured runs of each case goes there (the reference runs between show as idle). */
  cpuProf: process.env.BENCH_CPU_PROF,
  /** Which systems: access log on (info), off (warn). */
  levels: (process.env.BENCH_READ_LEVELS ?? "info,warn").split(",").filter(Boolean),
  /** Which cases: ids10000 (all ids), ids1000, mix. */
  cases: new Set((process.env.BENCH_READ_CASES ?? "ids10000,ids1000,mix").split(",").filter(Boolean)),
};

const WORDS = "harbour council budget river station morning school market summer bridge library festival weather railway garden museum".split(" ");

/** A text of about `chars` characters that differs from article to article (the store deflates it). */
function textOf(i: number, chars: number): string {
  let s = `Article ${i}.`;
  for (let k = 0; s.length < chars; k++) s += ` ${WORDS[(i * 7 + k * k) % WORDS.length]}${k % 9 === 8 ? "." : ""}`;
  return s;
}


interface Pair {
  ratio: number;
  cpuRatio: number;
  reqPerSec: number;
  refReqPerSec: number;
  cpuUsPerReq: number;
  refCpuUsPerReq: number;
  p99: number;
  non2xx: number;
}

/** One load run against `sut`, with its CPU per answered request in µs. */
async function run(sut: Sut, job: Record<string, unknown>): Promise<{ reqPerSec: number; cpuUs: number; p99: number; non2xx: number }> {
  const cpu0 = await sut.cpuMs();
  const r = await load({ ...job, url: sut.url, duration: cfg.duration });
  const cpu = (await sut.cpuMs()) - cpu0;
  return { reqPerSec: r.reqPerSec, cpuUs: r.total > 0 ? (1000 * cpu) / r.total : NaN, p99: r.p99, non2xx: r.non2xx + r.errors + r.timeouts };
}

/** Waits (up to 30 s) until the system uses under a tenth of a core: a write run's work after it must not slow the reference run next. */
async function idle(sut: Sut): Promise<void> {
  for (let i = 0; i < 60; i++) {
    const cpu0 = await sut.cpuMs();
    await new Promise((r) => setTimeout(r, 500));
    if ((await sut.cpuMs()) - cpu0 < 50) return;
  }
}

async function measure(label: string, sut: Sut, ref: Sut, kind: string, idsFile: string): Promise<Pair> {
  await load({ url: sut.url, kind, idsFile, duration: cfg.warmup });
  await load({ url: ref.url, kind: "reference", idsFile, duration: cfg.warmup });
  const pairs: Pair[] = [];
  const profile = cfg.cpuProf && join(cfg.cpuProf, `read-path-${kind}-${Date.now()}.cpuprofile`);
  if (profile) {
    mkdirSync(cfg.cpuProf!, { recursive: true });
    sut.profileStart();
  }
  for (let i = 0; i < cfg.runs; i++) {
    await idle(sut);
    const r = await run(ref, { kind: "reference", idsFile });
    const s = await run(sut, { kind, idsFile });
    pairs.push({ ratio: s.reqPerSec / r.reqPerSec, cpuRatio: r.cpuUs / s.cpuUs, reqPerSec: s.reqPerSec, refReqPerSec: r.reqPerSec, cpuUsPerReq: s.cpuUs, refCpuUsPerReq: r.cpuUs, p99: s.p99, non2xx: s.non2xx });
  }
  if (profile) {
    await sut.profileStop(profile);
    console.log(`  (profile of the measured runs: ${profile})`);
  }
  const m = (f: (p: Pair) => number) => median(pairs.map(f));
  const out: Pair = {
    ratio: m((p) => p.ratio),
    cpuRatio: m((p) => p.cpuRatio),
    reqPerSec: m((p) => p.reqPerSec),
    refReqPerSec: m((p) => p.refReqPerSec),
    cpuUsPerReq: m((p) => p.cpuUsPerReq),
    refCpuUsPerReq: m((p) => p.refCpuUsPerReq),
    p99: m((p) => p.p99),
    non2xx: pairs.reduce((n, p) => n + p.non2xx, 0),
  };
  console.log(
    `  ${label.padEnd(34)} × ref ${out.ratio.toFixed(2)} by req/s (${out.reqPerSec.toFixed(0)} vs ${out.refReqPerSec.toFixed(0)}; runs ${pairs.map((p) => p.ratio.toFixed(2)).join(", ")}), ` +
      `${out.cpuRatio.toFixed(2)} by CPU (${out.cpuUsPerReq.toFixed(0)} vs ${out.refCpuUsPerReq.toFixed(0)} µs/req; runs ${pairs.map((p) => p.cpuRatio.toFixed(2)).join(", ")})  p99 ${out.p99} ms  load ${os.loadavg()[0].toFixed(1)}` +
      (out.non2xx ? `  errors/non-2xx ${out.non2xx}` : ""),
  );
  return out;
}

export async function benchReadPath(): Promise<Record<string, Record<string, Pair>>> {
  const dir = mkdtempSync(join(os.tmpdir(), "bench-read-path-"));
  const results: Record<string, Record<string, Pair>> = {};
  let ref: Sut | undefined;
  try {
    console.log(`read path: ${cfg.ids} articles of ~${cfg.textChars} characters, ${cfg.runs} paired runs × ${cfg.duration} s, Node ${process.version}, ${os.cpus().length} CPUs`);
    for (const level of cfg.levels) {
      const name = level === "info" ? "access log on (LOG_LEVEL=info)" : `access log off (LOG_LEVEL=${level})`;
      const sut = await startSut("embedded", { LOG_LEVEL: level, BENCH_AUDIO: "onDemand" }, npmStartNodeFlags());
      if (typeof sut === "string") throw new Error(`embedded system did not start: ${sut}`);
      try {
        const ids = await createArticles(sut.url, cfg.ids, (i) => ({ title: `Read path ${i}`, text: textOf(i, cfg.textChars) }), 32);
        const all = join(dir, `ids-${level}.json`);
        const some = join(dir, `ids-${level}-1000.json`);
        writeFileSync(all, JSON.stringify(ids));
        writeFileSync(some, JSON.stringify(ids.slice(0, 1_000)));
        // The reference answers each id with this system's own answer for it.
        const bodies: Record<string, unknown> = {};
        for (const id of ids) bodies[id] = await api(sut.url, "GET", `/api/articles/${encodeURIComponent(id)}`);
        const bodiesFile = join(dir, `bodies-${level}.json`);
        writeFileSync(bodiesFile, JSON.stringify(bodies));
        await ref?.stop();
        const started = await startSut("reference", { BENCH_REFERENCE_BODIES: bodiesFile });
        if (typeof started === "string") throw new Error(`reference did not start: ${started}`);
        ref = started;
        console.log(`${name}:`);
        const out: Record<string, Pair> = (results[level] = {});
        if (cfg.cases.has("ids10000")) out.ids10000 = await measure(`GET by id, ${ids.length} ids`, sut, ref, "getById", all);
        if (cfg.cases.has("ids1000")) out.ids1000 = await measure("GET by id, 1,000 ids", sut, ref, "getById", some);
        // Last: its creates add articles.
        if (cfg.cases.has("mix")) out.mix = await measure(`95/5 read/write mix, ${ids.length} ids`, sut, ref, "mix95", all);
      } finally {
        await sut.stop();
      }
    }
  } finally {
    await ref?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  console.log("× ref: median of paired runs (a reference run right before each); by CPU = the reference's CPU per request / the system's. Mix: against the reference's GET by id.");
  return results;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  benchReadPath().then(
    (r) => {
      mkdirSync(join(import.meta.dirname, "results"), { recursive: true });
      const file = join(import.meta.dirname, "results", "read-path.json");
      writeFileSync(file, `${JSON.stringify({ started: new Date().toISOString(), node: process.version, config: cfg, results: r }, null, 2)}\n`);
      console.log(`figures written to ${file}`);
    },
    (e: unknown) => {
      console.error(e);
      process.exit(1);
    },
  );
}
