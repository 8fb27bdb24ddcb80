// `npm run bench`: starts each system in its own process, drives it with
// autocannon from another process, prints req/s, p50/p99 and the ratio to a
// bare Koa route measured in the same run; then the audio figures (local
// engine against the native pipe, provider path, worker memory). Writes
// everything to bench/results/. Not part of `npm test`; see bench/README.md.
import { spawn } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { api, createArticles, load, median, startSut, type LoadResult, type Sut } from "./harness.js";

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = join(HERE, "..");

const num = (name: string, dflt: number) => {
  const v = Number(process.env[name] ?? dflt);
  if (!Number.isFinite(v) || v <= 0) throw new Error(`${name} must be a positive number`);
  return v;
};
/** Least warm-up for the full stack's cases, seconds (see measure()). */
const STACK_WARMUP_S = 8;

const cfg = {
  duration: num("BENCH_DURATION", 5),
  runs: num("BENCH_RUNS", 3),
  warmup: num("BENCH_WARMUP", 2),
  connections: num("BENCH_CONNECTIONS", 50),
  seed: num("BENCH_SEED", 120),
  readySamples: num("BENCH_READY_SAMPLES", 3),
  systems: (process.env.BENCH_SYSTEMS ?? "embedded,stack").split(",").filter(Boolean),
  cases: (process.env.BENCH_CASES ?? "getById,segments,list,create,mix,ready").split(",").filter(Boolean),
  /** A directory: the systems under test run with --cpu-prof and write their profiles there. */
  cpuProf: process.env.BENCH_CPU_PROF,
  /** File that gets every line the systems under test print on stdout (where V8's --trace-gc* output goes). */
  sutStdout: process.env.BENCH_SUT_STDOUT,
  /** api: gateway throughput (issue 5); readPath: GET by id without a cache (issue 33, bench/read-path.ts); audio: local engine, provider path, worker memory (issue 4); fsync: durable store writes (issue 12); search: search at a million articles (issue 36, bench/search.ts); console: the console's paint and interactions in Chromium (issue 24); pages: create from a URL, fetch + extraction CPU per page (issue 35, bench/page-fetch.ts); sources: CPU of a 304 poll and of parsing a 100-item feed (issue 35, bench/source-poll.ts); bulk: a 10,000-article job's admission and another project's reads while it runs (issue 36, bench/bulk.ts).; lang: language detection's CPU per article against the store's deflate of the same text, and its accuracy (issue 35, bench/lang-detect.ts). */
  suites: (process.env.BENCH_SUITES ?? "api,readPath,audio,fsync,listener,scale,search,memory,console,pages,sources,bulk,lang").split(",").filter(Boolean),
  /** Microseconds of busy work per request for the calibration rows of the reference ("" for none). */
  calibrateUs: (process.env.BENCH_CALIBRATE_US ?? "20,50").split(",").filter(Boolean).map((v) => {
    const n = Number(v);
    if (!Number.isFinite(n) || n <= 0) throw new Error("BENCH_CALIBRATE_US must be a comma-separated list of positive numbers");
    return n;
  }),
};

const READY_TEXT = "The quick brown fox jumps over the lazy dog while the bench clock keeps running. ".repeat(26).slice(0, 2000);

interface CaseFigures {
  reqPerSec: number;
  p50: number;
  p99: number;
  ratio?: number;
  cpuMsPerReq?: number;
  cpuShare?: number;
  cpuMsPerReqByProcess?: Record<string, number>;
  loadavg?: number;
  errors: number;
  fiveXx: number;
  non2xx: number;
  runs: LoadResult[];
}
interface SystemFigures {
  skipped?: string;
  cases: Record<string, CaseFigures>;
  /** Seconds from POST to status ready, 2,000 characters, local synthesizer. */
  readySeconds?: { median: number; samples: number[] };
}

/** `n` short articles, created 8 at a time. */
const seed = (url: string, n: number) => createArticles(url, n, (i) => ({ title: `Seed ${i}`, text: `Seed article number ${i}.` }), 8);

/** Synthesis of the seeds would otherwise share the CPU with the first measurements. */
async function settle(url: string, ids: string[], timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = await api(url, "GET", "/api/articles?limit=100");
    const items = r.articles as Array<{ status: string }>;
    if (items.every((a) => a.status !== "waiting" && a.status !== "processing")) return;
    if (Date.now() > deadline) {
      console.log(`  (audio for the seeds still pending after ${timeoutMs / 1000} s; measuring anyway)`);
      return;
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  void ids;
}

async function readyTime(url: string): Promise<number> {
  const t0 = performance.now();
  const { id } = await api(url, "POST", "/api/articles", { title: "Ready timing", text: READY_TEXT });
  for (;;) {
    const r = await api(url, "GET", `/api/articles/${encodeURIComponent(id as string)}`);
    const status = (r.article as { status: string }).status;
    if (status === "ready") return (performance.now() - t0) / 1000;
    if (status === "errored") throw new Error(`ready timing: article errored: ${JSON.stringify(r.article)}`);
    if (performance.now() - t0 > 120_000) throw new Error("ready timing: not ready after 120 s");
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * One reference run, and what the system under test used meanwhile: it should
 * be idle then, or the pair is unfair.
 */
async function referenceRun(ref: Sut, sut: Sut): Promise<{ reqPerSec: number; sutCpuShare: number }> {
  const cpu0 = await sut.cpuMs();
  const t0 = performance.now();
  const r = await load({ url: ref.url, kind: "reference", ids: ["ref"], duration: cfg.duration });
  return { reqPerSec: r.reqPerSec, sutCpuShare: ((await sut.cpuMs()) - cpu0) / (performance.now() - t0) };
}

/**
 * Measures one case. With `pairWith` (the running reference), every measured
 * run is preceded by a reference run, and the ratio is the median of the
 * per-pair ratios: on a shared machine whose speed drifts over minutes, a
 * reference measured once at the start moved ratios by ±0.1. Unpaired cases
 * get their ratio against the reference measured at the start.
 */
async function measure(label: string, job: Record<string, unknown>, sut: Sut, mode: string, pairWith?: Sut): Promise<CaseFigures> {
  // The stack's four processes each compile their own create path; with the usual 2 s the
  // first measured run still paid for that (1.66 ms per create against 1.0-1.2 in the runs
  // after it), so the stack warms up for at least STACK_WARMUP_S.
  await load({ ...job, duration: mode === "stack" ? Math.max(cfg.warmup, STACK_WARMUP_S) : cfg.warmup });
  const runs: LoadResult[] = [];
  const profile = cfg.cpuProf && mode !== "reference" ? join(cfg.cpuProf, `${mode}-${job.kind as string}-${Date.now()}.cpuprofile`) : undefined;
  if (profile) {
    // A profile spans all measured runs: the reference's runs in between would show as idle time.
    pairWith = undefined;
    mkdirSync(cfg.cpuProf!, { recursive: true });
    sut.profileStart();
  }
  for (let i = 0; i < cfg.runs; i++) {
    const pair = pairWith ? await referenceRun(pairWith, sut) : undefined;
    const byProcess0 = await sut.cpuMsByProcess();
    const cpu0 = await sut.cpuMs();
    const t0 = performance.now();
    const r = await load({ ...job, duration: cfg.duration });
    const cpu = (await sut.cpuMs()) - cpu0;
    const byProcess1 = await sut.cpuMsByProcess();
    r.cpuMsPerReq = r.total > 0 ? cpu / r.total : undefined;
    if (byProcess0 && byProcess1 && r.total > 0) {
      r.cpuMsPerReqByProcess = Object.fromEntries(Object.keys(byProcess1).map((k) => [k, (byProcess1[k] - (byProcess0[k] ?? 0)) / r.total]));
    }
    r.cpuShare = cpu / (performance.now() - t0);
    r.loadavg = os.loadavg();
    r.refReqPerSec = pair?.reqPerSec;
    r.sutCpuShareDuringRef = pair?.sutCpuShare;
    runs.push(r);
  }
  if (profile) {
    await sut.profileStop(profile);
    console.log(`  (profile of the measured runs: ${profile})`);
  }
  const defined = (xs: Array<number | undefined>) => xs.filter((x): x is number => x !== undefined);
  const f: CaseFigures = {
    reqPerSec: median(runs.map((r) => r.reqPerSec)),
    p50: median(runs.map((r) => r.p50)),
    p99: median(runs.map((r) => r.p99)),
    cpuMsPerReq: median(defined(runs.map((r) => r.cpuMsPerReq))),
    cpuShare: median(defined(runs.map((r) => r.cpuShare))),
    ratio: pairWith ? median(runs.map((r) => r.reqPerSec / r.refReqPerSec!)) : undefined,
    loadavg: median(runs.map((r) => r.loadavg![0])),
    errors: runs.reduce((n, r) => n + r.errors + r.timeouts, 0),
    fiveXx: runs.reduce((n, r) => n + r.fiveXx, 0),
    non2xx: runs.reduce((n, r) => n + r.non2xx, 0),
    cpuMsPerReqByProcess: medianByKey(runs.flatMap((r) => (r.cpuMsPerReqByProcess ? [r.cpuMsPerReqByProcess] : []))),
    runs,
  };
  console.log(
    `  ${label.padEnd(28)} ${f.reqPerSec.toFixed(0).padStart(7)} req/s  p50 ${f.p50} ms  p99 ${f.p99} ms  ` +
      `CPU ${f.cpuMsPerReq!.toFixed(3)} ms/req (${(100 * f.cpuShare!).toFixed(0)}% of a core)  load ${f.loadavg!.toFixed(1)}  ` +
      `errors ${f.errors}  5xx ${f.fiveXx}  non-2xx ${f.non2xx}` +
      (f.ratio === undefined ? "" : `  × ref ${f.ratio.toFixed(2)} (paired)`),
  );
  if (f.cpuMsPerReqByProcess) console.log(`  ${"".padEnd(28)} CPU ms/req by process: ${formatByProcess(f.cpuMsPerReqByProcess)}`);
  return f;
}

/** Per-key median of per-run records (keys missing in a run are left out of that key's median). */
function medianByKey(records: Array<Record<string, number>>): Record<string, number> | undefined {
  if (records.length === 0) return undefined;
  const keys = [...new Set(records.flatMap((r) => Object.keys(r)))];
  return Object.fromEntries(keys.map((k) => [k, median(records.flatMap((r) => (k in r ? [r[k]] : [])))]));
}

/** "gateway 0.80  auth 1.80  articles 2.40 (project 5.00)  audio-1 0.01 …  other 4.00": `project` is gateway + auth + articles, the processes issue 13 targets. */
function formatByProcess(by: Record<string, number>): string {
  const own = ["gateway", "auth", "articles"];
  const project = own.reduce((n, k) => n + (by[k] ?? 0), 0);
  const rest = Object.keys(by).filter((k) => !own.includes(k) && k !== "other");
  return [...own.map((k) => `${k} ${(by[k] ?? 0).toFixed(2)}`), `(project ${project.toFixed(2)})`, ...rest.map((k) => `${k} ${by[k].toFixed(2)}`), `other (DB, NATS, launcher) ${(by.other ?? 0).toFixed(2)}`].join("  ");
}

const CASE_LABELS: Record<string, string> = {
  reference: "bare Koa route (reference)",
  getById: "GET /api/articles/:id",
  segments: "GET /api/articles/:id/segments",
  list: "GET /api/articles?limit=100",
  create: "POST /api/articles",
  mix: "90/10 read/write mix",
};

const PAIRED_CASES = new Set(["getById", "segments", "list"]);

async function benchSystem(mode: string, ref: Sut): Promise<SystemFigures> {
  console.log(`\n${mode}:`);
  const figures: SystemFigures = { cases: {} };
  const want = (c: string) => cfg.cases.includes(c);
  // Fresh system per phase: the audio backlog of a write phase must not tax the next one.
  const phases: string[][] = [["ready", "getById", "segments", "list"], ["create"], ["mix"]].map((p) => p.filter(want)).filter((p) => p.length > 0);
  for (const phase of phases) {
    const sut = await startSut(mode);
    if (typeof sut === "string") {
      console.log(`  ${mode}: skipped (${sut})`);
      return { skipped: sut, cases: {} };
    }
    try {
      if (phase.includes("ready")) {
        const samples: number[] = [];
        for (let i = 0; i < cfg.readySamples; i++) samples.push(await readyTime(sut.url));
        figures.readySeconds = { median: median(samples), samples };
        console.log(`  ${"create → ready (2,000 chars)".padEnd(28)} ${figures.readySeconds.median.toFixed(2)} s (samples ${samples.map((s) => s.toFixed(2)).join(", ")})`);
      }
      const loadPhase = phase.filter((c) => c !== "ready");
      if (loadPhase.length === 0) continue;
      const ids = await seed(sut.url, cfg.seed);
      await settle(sut.url, ids);
      // Only reads are paired: a write run leaves a synthesis backlog that would slow the reference run after it.
      for (const c of loadPhase) figures.cases[c] = await measure(CASE_LABELS[c], { url: sut.url, kind: c, ids }, sut, mode, PAIRED_CASES.has(c) ? ref : undefined);
    } finally {
      await sut.stop();
    }
  }
  return figures;
}

interface Calibration extends CaseFigures {
  workUs: number;
}

const calibrationLabel = (us: number) => `bare Koa + ${us} µs of work`;

/**
 * The reference, and the calibration rows: the same route burning a fixed
 * amount of CPU per request. They show in the same run how much work per
 * request a ratio leaves room for on this machine (a server slower than its
 * load generator also pays more per answer for waking it).
 */
async function reference(): Promise<{ ref: CaseFigures; calibration: Calibration[]; sut: Sut }> {
  // The reference answers with the bytes a real GET by id returns.
  const sys = await startSut("embedded");
  if (typeof sys === "string") throw new Error(`embedded system did not start: ${sys}`);
  let body: string;
  try {
    const [id] = await seed(sys.url, 1);
    body = JSON.stringify(await api(sys.url, "GET", `/api/articles/${encodeURIComponent(id)}`));
  } finally {
    await sys.stop();
  }
  console.log("reference:");
  const start = async (workUs: number): Promise<Sut> => {
    const s = await startSut("reference", { BENCH_REFERENCE_BODY: body, BENCH_REFERENCE_WORK_US: String(workUs) });
    if (typeof s === "string") throw new Error(`reference did not start: ${s}`);
    return s;
  };
  // It stays up (idle between its runs) so every later case can pair its runs with it.
  const sut = await start(0);
  try {
    const ref = await measure(CASE_LABELS.reference, { url: sut.url, kind: "reference", ids: ["ref"] }, sut, "reference");
    const calibration: Calibration[] = [];
    for (const us of cfg.calibrateUs) {
      const cal = await start(us);
      try {
        calibration.push({ ...(await measure(calibrationLabel(us), { url: cal.url, kind: "reference", ids: ["ref"] }, cal, "reference", sut)), workUs: us });
      } finally {
        await cal.stop();
      }
    }
    return { ref, calibration, sut };
  } catch (e) {
    await sut.stop();
    throw e;
  }
}

function table(ref: CaseFigures, calibration: Calibration[], systems: Record<string, SystemFigures>): string {
  const modes = Object.keys(systems);
  const head = ["case", ...modes.flatMap((m) => [`${m} req/s`, "p50 ms", "p99 ms", "× ref", "CPU ms/req", "load"])];
  const cpu = (f: CaseFigures) => (f.cpuMsPerReq === undefined ? "" : f.cpuMsPerReq.toFixed(3));
  const load = (f: CaseFigures) => (f.loadavg === undefined ? "" : f.loadavg.toFixed(1));
  const pad = modes.slice(1).flatMap(() => ["", "", "", "", "", ""]);
  const rows: string[][] = [["bare Koa reference", `${ref.reqPerSec.toFixed(0)}`, `${ref.p50}`, `${ref.p99}`, "1.00", cpu(ref), load(ref), ...pad]];
  for (const c of calibration) rows.push([calibrationLabel(c.workUs), `${c.reqPerSec.toFixed(0)}`, `${c.p50}`, `${c.p99}`, (c.ratio ?? 0).toFixed(2), cpu(c), load(c), ...pad]);
  for (const c of ["getById", "segments", "list", "create", "mix"]) {
    if (!cfg.cases.includes(c)) continue;
    rows.push([
      CASE_LABELS[c],
      ...modes.flatMap((m) => {
        const s = systems[m];
        const f = s.cases[c];
        if (!f) return [s.skipped ? "skipped" : "-", "", "", "", "", ""];
        return [f.reqPerSec.toFixed(0), `${f.p50}`, `${f.p99}`, (f.ratio ?? 0).toFixed(2), cpu(f), load(f)];
      }),
    ]);
  }
  if (cfg.cases.includes("ready")) {
    rows.push(["create → ready, 2,000 chars (s)", ...modes.flatMap((m) => [systems[m].readySeconds ? systems[m].readySeconds!.median.toFixed(2) : systems[m].skipped ? "skipped" : "-", "", "", "", "", ""])]);
  }
  const all = [head, ...rows];
  const widths = head.map((_, i) => Math.max(...all.map((r) => (r[i] ?? "").length)));
  return all.map((r) => r.map((cell, i) => (i === 0 ? (cell ?? "").padEnd(widths[i]) : (cell ?? "").padStart(widths[i]))).join("  ")).join("\n");
}

/** Issue 4's figures, each against its target or its same-run reference. */
async function audioSuite(): Promise<Record<string, unknown>> {
  console.log("\naudio:");
  // The audio benchmarks run the pipeline in this process; its info lines would bury the figures.
  process.env.LOG_LEVEL ??= process.env.BENCH_LOG_LEVEL ?? "warn";
  const { benchLocalEngine, formatLocalEngine } = await import("./local-engine.js");
  const { benchProviderPath, formatProviderPath, PROVIDER_PATH_SHAPES } = await import("./provider-path.js");
  const { benchAudioMemory, formatMemory } = await import("./audio-memory.js");
  const { findNativePrograms } = await import("../services/audio/engine/native.js");
  const local = await benchLocalEngine();
  console.log(`  ${formatLocalEngine(local)}`);
  const providerPath = [];
  for (const [shape, perParagraph] of PROVIDER_PATH_SHAPES) {
    const r = await benchProviderPath(20_000, perParagraph);
    providerPath.push({ shape, ...r });
    console.log(`  ${formatProviderPath(r, shape)}`);
  }
  const memory = [];
  for (const engine of (await findNativePrograms()) ? (["never", "always"] as const) : (["never"] as const)) {
    const r = await benchAudioMemory(engine);
    memory.push(r);
    console.log(`  ${formatMemory(r)}`);
  }
  const { benchSegments, formatSegments } = await import("./segments.js");
  const segments = await benchSegments();
  console.log(`  ${formatSegments(segments)}`);
  // After the memory figures: measuring leaves the meter's and decoder's WASM memory grown in this process.
  const { benchLoudness, formatLoudness } = await import("./loudness.js");
  const loudness = await benchLoudness();
  console.log(`  ${formatLoudness(loudness)}`);
  // Kokoro against eSpeak in the same run (issue 34); a line instead when its files are not installed.
  const { benchKokoro, formatKokoro, kokoroMissing } = await import("./kokoro.js");
  const missing = kokoroMissing();
  const kokoro = missing ? undefined : await benchKokoro();
  console.log(`  ${kokoro ? formatKokoro(kokoro) : `Kokoro: not measured (${missing})`}`);
  // With Kokoro on the embedded default: another project's API beside its renders, and a listener's first sound on audio made on demand.
  let kokoroApi: string | undefined;
  let firstSounds: Awaited<ReturnType<typeof import("./live-first-sound.js").firstSound>>[] | undefined;
  if (!missing) {
    const { benchKokoroApi } = await import("./kokoro-api.js");
    kokoroApi = await benchKokoroApi();
    console.log(`  ${kokoroApi}`);
    const { firstSound, formatFirstSound, referenceSentence } = await import("./live-first-sound.js");
    const reference = await referenceSentence();
    firstSounds = [await firstSound("espeak"), await firstSound("kokoro,pico,espeak")];
    console.log(`  ${formatFirstSound(firstSounds, reference)}`);
  }
  return { localEngine: local, providerPath, segments, loudness, memory, kokoro, kokoroApi, firstSounds };
}

/** Issue 12: what fsync before acknowledging costs, POST /api/articles and the store alone, each against a no-fsync reference in this run. */
async function fsyncSuite(): Promise<Record<string, unknown>> {
  console.log("\nembedded default, fsync (group commit) before acknowledging a write:");
  const post: Record<string, CaseFigures> = {};
  for (const mode of ["embedded-nofsync", "embedded"]) {
    const sut = await startSut(mode);
    if (typeof sut === "string") throw new Error(sut);
    try {
      post[mode] = await measure(mode === "embedded" ? "POST, fsync + group commit" : "POST, no fsync (reference)", { url: sut.url, kind: "create" }, sut, mode);
    } finally {
      await sut.stop();
    }
  }
  const ratio = post.embedded.reqPerSec / post["embedded-nofsync"].reqPerSec;
  const cpu = post.embedded.cpuMsPerReq! / post["embedded-nofsync"].cpuMsPerReq!;
  console.log(`  POST with fsync: ${ratio.toFixed(2)} × the reference's req/s, ${cpu.toFixed(2)} × its CPU per request`);
  const { benchStoreFsync, formatStoreFsync } = await import("./store-fsync.js");
  const store = await benchStoreFsync(cfg.duration, cfg.runs);
  console.log(`  store alone: ${formatStoreFsync(store)}`);
  return { post, postRatio: ratio, postCpuRatio: cpu, store };
}

/** Runs bench/<name>.ts in a process of its own and answers the figures it wrote to results/<name>.json. */
async function suiteInChild(name: string, env: NodeJS.ProcessEnv = process.env): Promise<Record<string, unknown>> {
  await new Promise<void>((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", join(HERE, `${name}.ts`)], { cwd: ROOT, env, stdio: ["ignore", "inherit", "inherit"] });
    child.once("exit", (code) => (code === 0 ? resolve() : reject(new Error(`bench/${name}.ts exited with ${code}`))));
  });
  return JSON.parse(readFileSync(join(HERE, "results", `${name}.json`), "utf8")) as Record<string, unknown>;
}

/** The listener side (bench/listener.ts); its figures join the report. */
function listenerSuite(): Promise<Record<string, unknown>> {
  console.log("\nlistener side (player lookup, event beacon, podcast feed) on the embedded default:");
  return suiteInChild("listener", { ...process.env, LOG_LEVEL: "warn" });
}

/** GET by id over 10,000 and 1,000 ids and the 95/5 mix, access log on and off (bench/read-path.ts). */
function readPathSuite(): Promise<Record<string, unknown>> {
  console.log("");
  return suiteInChild("read-path");
}

/** The archive at scale (bench/scale.ts: BENCH_SCALE_N and friends). */
const scaleSuite = () => suiteInChild("scale");

/** Search at a million articles: the index's size, the upgrade's fill, a query's p99 (bench/search.ts: BENCH_SEARCH_N). */
const searchSuite = () => suiteInChild("search", { ...process.env, LOG_LEVEL: "warn" });

/** RSS of npm start's process after start and under a small fixed load (bench/embedded-memory.ts). */
async function memorySuite(): Promise<unknown> {
  const { measureEmbeddedMemory, formatEmbeddedMemory } = await import("./embedded-memory.js");
  const r = await measureEmbeddedMemory();
  console.log(`\n${formatEmbeddedMemory(r)}`);
  return r;
}

/** The publisher console in Chromium (bench/console.ts), its system's logs at warn. */
function consoleSuite(): Promise<Record<string, unknown>> {
  console.log("");
  return suiteInChild("console", { ...process.env, LOG_LEVEL: "warn" });
}

/** Create from a URL: fetch + extraction of a 50 KB article page, CPU per page (bench/page-fetch.ts). */
function pagesSuite(): Promise<Record<string, unknown>> {
  console.log("");
  return suiteInChild("page-fetch");
}

/** Sources: CPU of a poll of an unchanged feed and of parsing a 100-item RSS feed (bench/source-poll.ts). */
function sourcesSuite(): Promise<Record<string, unknown>> {
  console.log("");
  return suiteInChild("source-poll", { ...process.env, LOG_LEVEL: "warn" });
}

/** Bulk jobs: a 10,000-regeneration job's admission, another project's reads while it runs (bench/bulk.ts). */
function bulkSuite(): Promise<Record<string, unknown>> {
  console.log("");
  return suiteInChild("bulk");
}

/** Language detection on the create path (bench/lang-detect.ts). */
function langSuite(): Promise<Record<string, unknown>> {
  console.log("");
  return suiteInChild("lang-detect");
}

async function main(): Promise<void> {
  const started = new Date();
  const dir = join(HERE, "results");
  const report: Record<string, unknown> = { started: started.toISOString(), node: process.version, cpus: os.cpus().length, config: { ...cfg } };
  if (cfg.suites.includes("api")) Object.assign(report, await apiSuite());
  if (cfg.suites.includes("readPath")) report.readPath = await readPathSuite();
  if (cfg.suites.includes("audio")) report.audio = await audioSuite();
  if (cfg.suites.includes("fsync")) report.fsync = await fsyncSuite();
  if (cfg.suites.includes("listener")) report.listener = await listenerSuite();
  if (cfg.suites.includes("scale")) report.scale = await scaleSuite();
  if (cfg.suites.includes("search")) report.search = await searchSuite();
  if (cfg.suites.includes("memory")) report.memory = await memorySuite();
  if (cfg.suites.includes("console")) report.console = await consoleSuite();
  if (cfg.suites.includes("pages")) report.pages = await pagesSuite();
  if (cfg.suites.includes("sources")) report.sources = await sourcesSuite();
  if (cfg.suites.includes("bulk")) report.bulk = await bulkSuite();
  if (cfg.suites.includes("lang")) report.lang = await langSuite();
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `bench-${started.toISOString().replace(/[:.]/g, "-")}.json`);
  writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(join(dir, "latest.json"), `${JSON.stringify(report, null, 2)}\n`);
  console.log(`figures written to ${file}`);
}

async function apiSuite(): Promise<{ reference: CaseFigures; calibration: Calibration[]; systems: Record<string, SystemFigures> }> {
  console.log(`bench: ${cfg.runs} × ${cfg.duration} s per case (+${cfg.warmup} s warm-up), ${cfg.connections} connections, ${os.cpus().length} CPUs, Node ${process.version}`);
  const { ref, calibration, sut: refSut } = await reference();
  const systems: Record<string, SystemFigures> = {};
  try {
    for (const mode of cfg.systems) {
      const s = await benchSystem(mode, refSut);
      // Unpaired (profiling) cases fall back to the reference measured at the start.
      for (const f of Object.values(s.cases)) f.ratio ??= f.reqPerSec / ref.reqPerSec;
      systems[mode] = s;
      if (s.skipped) console.log(`full stack: skipped (${s.skipped})`);
    }
  } finally {
    await refSut.stop();
  }
  console.log(`\n${table(ref, calibration, systems)}\n`);
  console.log("× ref: reads and calibration rows, median of paired runs (a reference run right before each run); writes, against the reference run at the start.\n");
  const bad = Object.entries(systems).flatMap(([m, s]) => Object.entries(s.cases).filter(([, f]) => f.errors || f.fiveXx || f.non2xx).map(([c]) => `${m}/${c}`));
  if (bad.length) console.log(`request errors or non-2xx answers in: ${bad.join(", ")}`);
  return { reference: ref, calibration, systems };
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
