// Kokoro-82M against eSpeak NG in the same run (issue 34, point 5): audio-seconds per CPU-second
// with 1 and 2 intra-op threads and with 1 and 2 speech hosts (worker processes), the time to a
// 30 s preview of an article, and the hosts' memory (RSS and PSS, idle and rendering). CPU is
// counted for this process and every process under it (the hosts run in their own), from /proc.
//   npm run bench (audio suite), or: tsx bench/kokoro.ts
//   (BENCH_KOKORO_LATENCY_ONLY=1 skips the throughput rows, BENCH_KOKORO_THROUGHPUT_ONLY=1 the article
//   runs; BENCH_KOKORO_THREADS=2 times one threading only; BENCH_KOKORO_RUNS, default 3: articles per
//   threading, each on a fresh host, printed as p50 / max)
import { readdirSync, readFileSync } from "node:fs";
import os from "node:os";
import { createLocalEngine, type SpeechEngine } from "../services/audio/engine/index.js";
import { createKokoroEngine, defaultKokoroDir } from "../services/audio/engine/kokoro/index.js";
import { kokoroFiles } from "../services/audio/engine/kokoro/files.js";
import { renderWithProviders } from "../services/audio/pipeline.js";
import { createSpeechRouter, localProvider } from "../services/audio/providers/index.js";
import { KOKORO_CHUNK_CHARS } from "../services/audio/providers/config.js";
import { mp3Duration } from "../services/audio/mp3/index.js";
import { quantile } from "./quantile.js";
import { Writable } from "node:stream";
import { pino } from "pino";
import type { RenderTiming } from "../services/audio/engine/native-host-protocol.js";

const RUNS = Math.max(1, Number(process.env.BENCH_KOKORO_RUNS ?? 3));

const SENTENCES = [
  "The city council approved the budget for the public libraries on Tuesday evening, after a debate that lasted almost three hours.",
  "Under the plan, the main branch on Elm Street will stay open on Sundays, and two neighbourhood branches will add evening hours.",
  "Supporters said the money would pay for itself, because more residents would use the reading rooms, the computers and the children's programmes.",
  "Critics on the finance committee warned that the cost of heating the old building had doubled in four years.",
  "The mayor said she would ask the state for help with the roof, which has leaked since the winter storms.",
  "A final vote on the repairs is expected next month.",
];
const TEXT = SENTENCES.join(" ");
// About 75 s of speech: long enough that its preview (25-40 s) is not the whole article.
const ARTICLE = [...SENTENCES, ...SENTENCES.slice(0, 4).map((s) => s.replace("The ", "Again, the "))].join(" ");
// About five minutes of speech (issue 34: ready within 150 s on 2 idle cores), in paragraphs that
// differ from each other, as a long article's do.
const LONG_OPENINGS = ["", "In the first reading, ", "According to the minutes, ", "Later that week, ", "In a statement, ", "As reported before, ", "Meanwhile, "];
const LONG_ARTICLE = LONG_OPENINGS.map((lead) => SENTENCES.map((s) => (lead ? lead + s[0].toLowerCase() + s.slice(1) : s)).join(" ")).join("\n\n");

interface Proc {
  pid: number;
  ppid: number;
  /** Its own CPU and that of the children it has reaped (the host's eSpeak runs, one per clause). */
  cpuS: number;
  reapedS: number;
}

const TICK = 100; // USER_HZ on Linux

function procs(): Proc[] {
  const out: Proc[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      const reapedS = (Number(f[13]) + Number(f[14])) / TICK;
      out.push({ pid: Number(name), ppid: Number(f[1]), cpuS: (Number(f[11]) + Number(f[12])) / TICK + reapedS, reapedS });
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

function descendants(root = process.pid): Proc[] {
  const all = procs();
  const found: Proc[] = [];
  const want = new Set([root]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const p of all) if (want.has(p.ppid) && !want.has(p.pid)) (want.add(p.pid), found.push(p), (grew = true));
  }
  return found;
}

/** CPU seconds of this process (all its threads) and of everything under it that is still running, with what they reaped. */
function cpuNow(): { all: number; reaped: number } {
  const own = process.cpuUsage();
  const under = descendants();
  const ownS = (own.user + own.system) / 1e6;
  return { all: ownS + under.reduce((s, p) => s + p.cpuS, 0), reaped: under.reduce((s, p) => s + p.reapedS, 0) };
}

function memoryOf(pid: number): { rss: number; pss: number } {
  try {
    const text = readFileSync(`/proc/${pid}/smaps_rollup`, "utf8");
    const kb = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+)`, "m").exec(text)?.[1] ?? 0);
    return { rss: kb("Rss") / 1024, pss: kb("Pss") / 1024 };
  } catch {
    return { rss: 0, pss: 0 };
  }
}

/** Sum over this process and its children. */
function memoryAll(): { rss: number; pss: number } {
  return [process.pid, ...descendants().map((p) => p.pid)].map(memoryOf).reduce((a, b) => ({ rss: a.rss + b.rss, pss: a.pss + b.pss }), { rss: 0, pss: 0 });
}

/**
 * Peak of memoryAll() while `work` runs, and the CPU the sampling itself took: reading every
 * process's stat and the hosts' smaps_rollup four times a second took ~75 ms per second, ~10 % of
 * a Kokoro row's CPU, the measurement's and not the engine's, so the rows leave it out.
 */
async function peakWhile<T>(work: Promise<T>): Promise<{ value: T; rss: number; pss: number; samplingS: number }> {
  let rss = 0;
  let pss = 0;
  let samplingS = 0;
  const sample = () => {
    const cpu = process.cpuUsage();
    const m = memoryAll();
    rss = Math.max(rss, m.rss);
    pss = Math.max(pss, m.pss);
    const d = process.cpuUsage(cpu);
    samplingS += (d.user + d.system) / 1e6;
  };
  const timer = setInterval(sample, 250);
  try {
    const value = await work;
    sample();
    return { value, rss, pss, samplingS };
  } finally {
    clearInterval(timer);
  }
}

export interface Throughput {
  label: string;
  audioS: number;
  cpuS: number;
  wallS: number;
  /** Audio-seconds per CPU-second. */
  perCpu: number;
  peakRssMb: number;
  peakPssMb: number;
  /** Of the CPU: the model's calls (every ONNX Runtime thread) and eSpeak's phonemes, as the Kokoro hosts report them. */
  inferS?: number;
  phonemesS?: number;
}

/** The render timings the Kokoro hosts report (their debug log lines), gathered. */
function timingLog() {
  const renders: RenderTiming[] = [];
  const log = pino({ level: "debug" }, new Writable({ write: (chunk, _e, done) => (renders.push(JSON.parse(String(chunk))), done()) }));
  return { log, renders };
}

async function throughput(label: string, engines: SpeechEngine[], voice: string, renders?: RenderTiming[]): Promise<Throughput> {
  // The sentences dealt out to the engines, each rendering its share in order.
  const shares = engines.map((_, i) => SENTENCES.filter((__, j) => j % engines.length === i).join(" "));
  const cpu0 = cpuNow();
  const t0 = performance.now();
  const { value: mp3s, rss, pss, samplingS } = await peakWhile(Promise.all(engines.map((e, i) => e.synthesize({ text: shares[i], voice, lang: "en-US" }))));
  const wallS = (performance.now() - t0) / 1000;
  const cpu1 = cpuNow();
  const cpuS = cpu1.all - cpu0.all - samplingS;
  const audioS = mp3s.reduce((s, m) => s + mp3Duration(m), 0);
  const timed = renders?.filter((r) => typeof r.inferCpuMs === "number") ?? [];
  const inferS = timed.length ? timed.reduce((s, r) => s + r.inferCpuMs, 0) / 1000 : undefined;
  return { label, audioS, cpuS, wallS, perCpu: audioS / cpuS, peakRssMb: rss, peakPssMb: pss, inferS, phonemesS: renders ? cpu1.reaped - cpu0.reaped : undefined };
}

/** From the job's start (a fresh host, as a worker that just started): its preview ready, and the whole article. */
export interface Latency {
  label: string;
  previewS: number;
  previewAudioS: number;
  fullS: number;
  fullAudioS: number;
  peakPssMb: number;
}

async function latency(label: string, engine: SpeechEngine, espeakEngine: SpeechEngine, voice: string, text: string, base: { pss: number }): Promise<Latency> {
  const router = createSpeechRouter({ providers: { local: localProvider(espeakEngine, 1000), kokoro: engine.name === "local-kokoro" ? localProvider(engine, KOKORO_CHUNK_CHARS) : undefined } });
  const t0 = performance.now();
  let previewS = NaN;
  let previewAudioS = NaN;
  const { value: r, pss } = await peakWhile(
    renderWithProviders({ title: "Library budget approved", text, lang: "en-US", voice }, router, {
      onPreview: async (p) => {
        previewS = (performance.now() - t0) / 1000;
        previewAudioS = p.duration;
      },
      onRetry: () => undefined,
    }),
  );
  return { label, previewS, previewAudioS, fullS: (performance.now() - t0) / 1000, fullAudioS: r.fullDuration, peakPssMb: pss - base.pss };
}

export interface KokoroBench {
  /** uptime's 1-minute load average when the run began and ended. */
  load: [number, number];
  latency: Latency[];
  espeak: Throughput;
  kokoro: Throughput[];
  loadS: number;
  idle: { rssMb: number; pssMb: number };
}

export async function benchKokoro(): Promise<KokoroBench> {
  const load0 = loadAverage()[0];
  const espeakEngine = await createLocalEngine({ threads: 1, native: "never" });
  // Warm: the first render compiles and grows WASM memory.
  await espeakEngine.synthesize({ text: SENTENCES[0], voice: "alloy", lang: "en-US" });
  const espeak = await throughput("eSpeak NG (WASM, 1 thread)", [espeakEngine], "alloy");
  const kokoro: Throughput[] = [];
  const base = memoryAll();
  let loadS = 0;
  let idle = { rssMb: 0, pssMb: 0 };
  // BENCH_KOKORO_LATENCY_ONLY=1: only the times from the job's start (the throughput rows take minutes on a loaded machine).
  const setups = process.env.BENCH_KOKORO_LATENCY_ONLY ? [] : ([[1, 1], [1, 2], [2, 1]] as const);
  for (const [hosts, threads] of setups) {
    const t0 = performance.now();
    const { log, renders } = timingLog();
    const engines = await Promise.all(Array.from({ length: hosts }, () => createKokoroEngine({ threads, log })));
    try {
      if (hosts === 1 && threads === 1) {
        loadS = (performance.now() - t0) / 1000;
        const m = memoryAll();
        idle = { rssMb: m.rss - base.rss, pssMb: m.pss - base.pss };
      }
      // The first call of a session pays for its allocations: not what an article sees after it.
      await Promise.all(engines.map((e) => e.synthesize({ text: "Good morning.", voice: "af_heart", lang: "en-US" })));
      renders.length = 0;
      const r = await throughput(`Kokoro, ${hosts} host${hosts > 1 ? "s" : ""} x ${threads} thread${threads > 1 ? "s" : ""}`, engines, "af_heart", renders);
      kokoro.push({ ...r, peakRssMb: r.peakRssMb - base.rss, peakPssMb: r.peakPssMb - base.pss });
    } finally {
      await Promise.all(engines.map((e) => e.close()));
    }
  }

  // A fresh host each, as a worker that just started (its start, with its first call, is not counted:
  // the service starts the host with itself). Each run's article is other text: nothing from a cache.
  const latencies: Latency[] = [];
  const runs = process.env.BENCH_KOKORO_THROUGHPUT_ONLY ? 0 : RUNS;
  for (let n = 0; n < runs; n++) latencies.push(await latency("eSpeak NG (WASM, 1 thread)", espeakEngine, espeakEngine, "alloy", variant(n), base));
  for (const threads of runs ? (process.env.BENCH_KOKORO_THREADS ?? "1,2").split(",").map(Number) : []) {
    for (let n = 0; n < runs; n++) {
      const engine = await createKokoroEngine({ threads });
      try {
        latencies.push(await latency(`Kokoro, ${threads} thread${threads > 1 ? "s" : ""}`, engine, espeakEngine, "af_heart", variant(n), base));
      } finally {
        await engine.close();
      }
    }
  }
  await espeakEngine.close();
  return { load: [load0, loadAverage()[0]], latency: latencies, espeak, kokoro, loadS, idle };
}

/** The long article, its sentences led in another way for each run. */
function variant(n: number): string {
  return n === 0 ? LONG_ARTICLE : LONG_ARTICLE.replace(/(^|\n\n)/g, `$1In part ${n + 1}, `);
}

function loadAverage(): number[] {
  return os.loadavg();
}

/** Why Kokoro cannot be measured here, or undefined when it can. */
export function kokoroMissing(): string | undefined {
  try {
    kokoroFiles(process.env.KOKORO_DIR ?? defaultKokoroDir());
    return undefined;
  } catch (e) {
    return (e as Error).message;
  }
}

/** Where a Kokoro row's CPU went: the model's calls, eSpeak's phonemes, and the rest (leveling, LAME, IPC, Node). */
function split(t: Throughput): string {
  if (t.inferS === undefined) return "";
  const pct = (x: number) => `${((100 * x) / t.cpuS).toFixed(1)} %`;
  const phonemes = t.phonemesS ?? 0;
  return `\n      CPU: model ${pct(t.inferS)} (${(t.audioS / t.inferS).toFixed(2)} audio-s per its CPU-s), eSpeak's phonemes ${pct(phonemes)}, the rest ${pct(t.cpuS - t.inferS - phonemes)}`;
}

export function formatKokoro(b: KokoroBench): string {
  const row = (t: Throughput) =>
    `${t.label.padEnd(30)} ${t.perCpu.toFixed(2).padStart(7)} audio-s/CPU-s  ${(t.audioS / t.wallS).toFixed(2).padStart(5)} audio-s/wall-s  peak +${t.peakRssMb.toFixed(0)} MB RSS / +${t.peakPssMb.toFixed(0)} MB PSS`;
  const lines = [
    "Kokoro-82M int8 against eSpeak NG (same text, same run):",
    `    ${row(b.espeak)}`,
    ...b.kokoro.map((k) => `    ${row(k)}   (${(k.perCpu / b.espeak.perCpu).toFixed(4)} x eSpeak's)${split(k)}`),
    `    model load ${b.loadS.toFixed(1)} s; one idle host +${b.idle.rssMb.toFixed(0)} MB RSS / +${b.idle.pssMb.toFixed(0)} MB PSS`,
    ...(b.latency.length ? [`    from the job's start (fresh host), an article of ${(b.latency[0]?.fullAudioS ?? 0).toFixed(0)} s (targets: preview within 15 s, article within 150 s on 2 idle cores):`] : []),
    ...[...new Set(b.latency.map((l) => l.label))].map((label) => {
      const runs = b.latency.filter((l) => l.label === label);
      const p50max = (xs: number[]) => `p50 ${quantile(xs, 0.5).toFixed(1).padStart(5)} s / max ${Math.max(...xs).toFixed(1).padStart(5)} s`;
      return `      ${label.padEnd(28)} preview of ${quantile(runs.map((l) => l.previewAudioS), 0.5).toFixed(1)} s ready after ${p50max(runs.map((l) => l.previewS))}, whole article after ${p50max(runs.map((l) => l.fullS))} (${runs.length} run${runs.length > 1 ? "s" : ""}); peak +${Math.max(...runs.map((l) => l.peakPssMb)).toFixed(0)} MB PSS`;
    }),
    `    load average ${b.load[0].toFixed(2)} at the start, ${b.load[1].toFixed(2)} at the end`,
  ];
  return lines.join("\n  ");
}

if (import.meta.url === `file://${process.argv[1]}`) {
  process.env.LOG_LEVEL ??= "warn";
  console.log(`  ${formatKokoro(await benchKokoro())}`);
}
