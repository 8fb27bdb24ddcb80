// Issue 4 benchmark: peak memory of an audio worker process rendering a 100,000-character
// article (about 1.6 hours of speech) from job to stored full + preview MP3. Each engine runs in
// a fresh child process that reports process.resourceUsage().maxRSS (worker threads included).
// Target: at most 300 MB.  Run: npx tsx bench/audio-memory.ts
import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { findNativePrograms } from "../services/audio/engine/native.js";
import { benchArticle } from "./article.js";
import { startAudioPath } from "./audio-path.js";

const LIMIT_MB = 300;

export interface MemoryFigures {
  engine: string;
  chars: number;
  peakMb: number;
  /** Before the job: the process with its engine loaded. */
  idleMb: number;
  seconds: number;
  audioMinutes: number;
  ok: boolean;
}

/** Child side: render once, print the figures as one JSON line. */
async function child(engine: "never" | "always", chars: number): Promise<void> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "bench-memory-"));
  const audio = await startAudioPath(dir, undefined, engine);
  try {
    const idleMb = process.resourceUsage().maxRSS / 1024;
    const r = await audio.render("Council approves the budget", benchArticle(chars));
    const peakMb = process.resourceUsage().maxRSS / 1024;
    const figures: MemoryFigures = { engine: audio.engineName, chars, peakMb, idleMb, seconds: r.seconds, audioMinutes: r.audioSeconds / 60, ok: peakMb <= LIMIT_MB };
    console.log(JSON.stringify(figures));
  } finally {
    await audio.close();
    await rm(dir, { recursive: true, force: true });
  }
}

export function benchAudioMemory(engine: "never" | "always", chars = 100_000): Promise<MemoryFigures> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, ["--import", "tsx", fileURLToPath(import.meta.url), "--child", engine, String(chars)], {
      stdio: ["ignore", "pipe", "inherit"],
      env: { ...process.env, LOG_LEVEL: process.env.LOG_LEVEL ?? "warn" },
    });
    let out = "";
    proc.stdout.on("data", (d) => (out += d));
    proc.on("error", reject);
    proc.on("close", (code) => {
      const line = out.trim().split("\n").pop() ?? "";
      if (code !== 0 || !line.startsWith("{")) reject(new Error(`memory bench child exited with ${code}: ${out.slice(-300)}`));
      else resolve(JSON.parse(line) as MemoryFigures);
    });
  });
}

export function formatMemory(r: MemoryFigures): string {
  return (
    `audio worker memory, ${r.chars} chars (${r.audioMinutes.toFixed(0)} min of audio) with ${r.engine}: peak RSS ${r.peakMb.toFixed(0)} MB ` +
    `(target <= ${LIMIT_MB} MB; ${r.idleMb.toFixed(0)} MB before the job), rendered in ${r.seconds.toFixed(1)} s ${r.ok ? "OK" : "FAIL"}`
  );
}

if (import.meta.url === `file://${process.argv[1]}`) {
  if (process.argv[2] === "--child") {
    await child(process.argv[3] as "never" | "always", Number(process.argv[4]));
  } else {
    let ok = true;
    const engines: Array<"never" | "always"> = (await findNativePrograms()) ? ["never", "always"] : ["never"];
    for (const engine of engines) {
      const r = await benchAudioMemory(engine);
      ok &&= r.ok;
      console.log(formatMemory(r));
    }
    process.exitCode = ok ? 0 : 1;
  }
}
