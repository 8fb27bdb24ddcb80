// Issue 4 benchmark: the local engine against the native tools. A 20,000-character English
// article goes from job start (bus publish) to stored full + preview MP3 through the real audio
// worker (claim, provider router, chunk plan, WASM engine on all cores, frame-level assembly,
// blob store), and is compared with the native pipe
//   espeak-ng -v en-us -f text --stdout | lame -q 7 -b 48 -m m - out.mp3
// measured in the same run, alternating, median of BENCH_LOCAL_RUNS (default 3).
// Target: at most 1.2x the native pipe.  Run: npx tsx bench/local-engine.ts
import { spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { findNativePrograms } from "../services/audio/engine/native.js";
import { benchArticle } from "./article.js";
import { startAudioPath } from "./audio-path.js";

export interface LocalEngineFigures {
  chars: number;
  threads: number;
  /** Median seconds, job start to stored full + preview. */
  wasmSeconds: number;
  /** Median seconds of the native pipe, or undefined when the programs are missing. */
  nativeSeconds?: number;
  ratio?: number;
  /** The same pipeline with the native engine (what "auto" picks when the programs are there). */
  nativeEngineSeconds?: number;
  loadAverage: number;
  skipped?: string;
  audioSeconds: number;
  runs: { wasm: number[]; native: number[]; nativeEngine: number[] };
  ok: boolean;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];

function sh(command: string, cwd: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn("sh", ["-c", command], { cwd, stdio: ["ignore", "ignore", "pipe"] });
    let err = "";
    child.stderr.on("data", (d) => (err += d));
    child.on("error", reject);
    child.on("close", (code) => (code === 0 ? resolve() : reject(new Error(`${command} exited with ${code}: ${err.slice(0, 300)}`))));
  });
}

export async function benchLocalEngine(chars = 20_000, runs = Number(process.env.BENCH_LOCAL_RUNS ?? 3)): Promise<LocalEngineFigures> {
  const threads = os.availableParallelism();
  const dir = await mkdtemp(path.join(os.tmpdir(), "bench-local-"));
  const title = "Council approves the budget";
  const text = benchArticle(chars);
  const native = await findNativePrograms();
  // The pipe reads the same words the pipeline speaks: title, then the body.
  await writeFile(path.join(dir, "text.txt"), `${title}.\n\n${text}`);
  const wasm = await startAudioPath(dir, threads, "never");
  const nativeEngine = native ? await startAudioPath(dir, threads, "always") : undefined;
  const figures = { wasm: [] as number[], native: [] as number[], nativeEngine: [] as number[] };
  let audioSeconds = 0;
  const load = os.loadavg()[0];
  try {
    // Not measured: lets V8 optimise the WASM code and every thread load its voice data.
    await wasm.render("Warm-up", benchArticle(3000));
    for (let i = 0; i < runs; i++) {
      if (native) {
        const started = performance.now();
        await sh("espeak-ng -v en-us -f text.txt --stdout | lame -q 7 -b 48 -m m --silent - out.mp3", dir);
        figures.native.push((performance.now() - started) / 1000);
      }
      const r = await wasm.render(title, text);
      figures.wasm.push(r.seconds);
      audioSeconds = r.audioSeconds;
      if (nativeEngine) figures.nativeEngine.push((await nativeEngine.render(title, text)).seconds);
    }
  } finally {
    await wasm.close();
    await nativeEngine?.close();
    await rm(dir, { recursive: true, force: true });
  }
  const wasmSeconds = median(figures.wasm);
  const loadAverage = (load + os.loadavg()[0]) / 2;
  if (!native) return { chars: text.length, threads, wasmSeconds, skipped: "espeak-ng and lame are not both on PATH", audioSeconds, loadAverage, runs: figures, ok: true };
  const nativeSeconds = median(figures.native);
  const ratio = wasmSeconds / nativeSeconds;
  const nativeEngineSeconds = median(figures.nativeEngine);
  return { chars: text.length, threads, wasmSeconds, nativeSeconds, ratio, nativeEngineSeconds, audioSeconds, loadAverage, runs: figures, ok: ratio <= 1.2 };
}

export function formatLocalEngine(r: LocalEngineFigures): string {
  const head = `local engine, ${r.chars} chars (${(r.audioSeconds / 60).toFixed(1)} min of audio), WASM on ${r.threads} threads: ${r.wasmSeconds.toFixed(2)} s job start to stored full + preview`;
  if (r.skipped) return `${head}; native pipe: skipped (${r.skipped}), no ratio`;
  return (
    `${head}; native pipe ${r.nativeSeconds!.toFixed(2)} s; ratio ${r.ratio!.toFixed(2)}x (target <= 1.2x) ${r.ok ? "OK" : "FAIL"}; ` +
    `same pipeline with the native engine ${r.nativeEngineSeconds!.toFixed(2)} s (${(r.nativeEngineSeconds! / r.nativeSeconds!).toFixed(2)}x); load average ${r.loadAverage.toFixed(1)}`
  );
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const r = await benchLocalEngine();
  console.log(formatLocalEngine(r));
  const list = (xs: number[]) => xs.map((s) => s.toFixed(2)).join(", ") || "-";
  console.log(`  runs (s): wasm ${list(r.runs.wasm)}; native pipe ${list(r.runs.native)}; native engine ${list(r.runs.nativeEngine)}`);
  process.exitCode = r.ok ? 0 : 1;
}
