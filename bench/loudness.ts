// Issue 14 benchmark: what loudness normalisation costs.
// - Local engine: a 20,000-character article rendered with the PCM leveling (gain + limiter
//   before encoding) against the same render without it, alternating, median of
//   BENCH_LOUDNESS_RUNS (default 3). Target: at most 10 % more time.
// - Provider path: the time the loudness step adds after the last chunk has arrived (the
//   chunks are measured as they come in, while other requests are still out), from
//   renderWithProviders, for a 20,000-character article against the slow fake provider.
//   Target: at most 50 ms. Also printed: what measuring costs per minute of provider audio,
//   which is what a real provider's last chunk leaves on the critical path.
// - The leveler alone: CPU per 20 minutes of the engine's speech (benchLeveler).
// Run: npx tsx bench/loudness.ts
import { execFileSync } from "node:child_process";
import { rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { compileWasm, wasmAssetsDir } from "../services/audio/engine/assets.js";
import { createLocalEngine } from "../services/audio/engine/index.js";
import { ESPEAK_RATE } from "../services/audio/engine/types.js";
import { espeakVoice } from "../services/audio/engine/voices.js";
import { loadEspeak } from "../services/audio/engine/wasm-espeak.js";
import { Leveler, measureMp3, preloadLoudness } from "../services/audio/loudness/index.js";
import { mp3Duration } from "../services/audio/mp3/index.js";
import { renderArticle, renderWithProviders } from "../services/audio/pipeline.js";
import { createOpenAiProvider, createSpeechRouter, localProvider } from "../services/audio/providers/index.js";
import { applyGainSteps } from "../services/audio/mp3/gain.js";
import { FAKE_OPENAI_KEY, startFakeProviders, startSlowFakeProviders } from "../test/support/fake-providers.js";
import { benchArticle } from "./article.js";

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];

export interface LoudnessFigures {
  chars: number;
  threads: number;
  engine: string;
  leveledSeconds: number;
  rawSeconds: number;
  localRatio: number;
  providerMs: number;
  providerMethod: string;
  /** The same with a different clip per request (none measured before), and the audio it made. */
  distinctMs: number;
  distinctSeconds: number;
  measureMsPerAudioMinute: number;
  /** CPU time of the leveler for 20 minutes of the local engine's speech, ms (see benchLeveler). */
  levelerCpuMs: number;
  /** The same for the leveler before its loops were optimised (LEVELER_BEFORE), when git has it. */
  levelerBeforeMs?: number;
  runs: { leveled: number[]; raw: number[] };
  ok: boolean;
}

export async function benchLoudness(chars = 20_000, runs = Number(process.env.BENCH_LOUDNESS_RUNS ?? 3)): Promise<LoudnessFigures> {
  const threads = os.availableParallelism();
  const text = benchArticle(chars);
  const engine = await createLocalEngine({ threads, native: "never" });
  const figures = { leveled: [] as number[], raw: [] as number[] };
  let providerMs = 0;
  let providerMethod = "";
  let measureMsPerAudioMinute = 0;
  let distinctMs = 0;
  let levelerCpuMs = 0;
  let levelerBeforeMs: number | undefined;
  let distinctSeconds = 0;
  try {
    // As the audio worker renders locally: chunks of 1,000 characters on every thread.
    const render = async (loudness: null | undefined) => {
      const started = performance.now();
      await renderArticle({ title: "Council approves the budget", text, lang: "en-US", voice: "alloy" }, engine, { concurrency: threads, maxChunkChars: 1000, loudness });
      return (performance.now() - started) / 1000;
    };
    await render(undefined);
    // Alternating which goes first, so that neither always runs in the other's wake.
    for (let i = 0; i < runs; i++) {
      if (i % 2 === 0) {
        figures.raw.push(await render(null));
        figures.leveled.push(await render(undefined));
      } else {
        figures.leveled.push(await render(undefined));
        figures.raw.push(await render(null));
      }
    }
    ({ ms: levelerCpuMs, beforeMs: levelerBeforeMs } = await benchLeveler());

    // As the audio worker does at start.
    await preloadLoudness();
    const clip = await engine.synthesize({ text: "A short clip that every request gets back.", voice: "alloy", lang: "en-US", level: { lufs: -24, truePeak: -6 } });
    // As bench/provider-path.ts: every request gets the same clip back after 1 s + 0.1 ms per character.
    const fake = await startSlowFakeProviders(clip);
    try {
      const speech = createSpeechRouter({ providers: { openai: createOpenAiProvider({ apiKey: FAKE_OPENAI_KEY, baseUrl: fake.openaiBaseUrl }), local: localProvider(engine) } });
      const r = await renderWithProviders({ title: "Council approves the budget", text, lang: "en-US", voice: "alloy" }, speech);
      providerMs = r.loudnessMs;
      providerMethod = r.loudness;
    } finally {
      await fake.close();
    }
    // Every request a different clip (as real chunks are), all arriving at once: nothing to overlap.
    const variants = [0, 1, 2, 3].map((k) => applyGainSteps(clip, k).mp3);
    let n = 0;
    const distinct = await startFakeProviders({ audio: () => { const v = Buffer.from(variants[n % 4]); v[v.length - 1] ^= ++n & 0xff; return v; }, latencyMs: (t) => 1000 + 0.1 * t.length });
    try {
      const speech = createSpeechRouter({ providers: { openai: createOpenAiProvider({ apiKey: FAKE_OPENAI_KEY, baseUrl: distinct.openaiBaseUrl }), local: localProvider(engine) } });
      const r = await renderWithProviders({ title: "Council approves the budget, again", text: text.replace(/Update/g, "Note"), lang: "en-US", voice: "alloy" }, speech);
      distinctMs = r.loudnessMs;
      distinctSeconds = r.fullDuration;
    } finally {
      await distinct.close();
    }
    // A real provider's 4,096-character chunk is about four minutes of speech.
    const long = await engine.synthesize({ text: benchArticle(4000).replace(/\n\n/g, " "), voice: "alloy", lang: "en-US" });
    const started = performance.now();
    await measureMp3(long);
    measureMsPerAudioMinute = (performance.now() - started) / (mp3Duration(long) / 60);
  } finally {
    await engine.close();
  }
  const leveledSeconds = median(figures.leveled);
  const rawSeconds = median(figures.raw);
  const localRatio = leveledSeconds / rawSeconds;
  return { chars: text.length, threads, engine: "local-wasm", leveledSeconds, rawSeconds, localRatio, providerMs, providerMethod, distinctMs, distinctSeconds, measureMsPerAudioMinute, levelerCpuMs, levelerBeforeMs, runs: figures, ok: localRatio <= 1.1 && providerMs <= 50 };
}

/** The last commit before the leveler's loops were optimised: its CPU figure is printed alongside. */
const LEVELER_BEFORE = "5505537";

/**
 * The leveler alone, free of the noise of two whole renders: CPU ms for 20 minutes of eSpeak's
 * own speech (about a minute of the bench article in the render's voice, repeated), fed as
 * wasm-synth.ts does (eSpeak's 100 ms blocks, a new leveler for every minute, the length of a
 * chunk), after a warm-up; median of 3 runs alternating with the leveler as it was at
 * LEVELER_BEFORE (taken from git; left out where git or the commit is missing).
 */
export async function benchLeveler(): Promise<{ ms: number; beforeMs?: number }> {
  const espeak = await loadEspeak(wasmAssetsDir(), compileWasm().espeak);
  const voice = espeakVoice("alloy", "en-US");
  const blocks: Int16Array[] = [];
  espeak.speak(voice, benchArticle(1000).replace(/\n\n/g, " "), (block) => (blocks.push(Int16Array.from(block)), true));
  const minute = 60 * ESPEAK_RATE;
  const cpu = (Make: typeof Leveler, minutes = 20) => {
    const started = process.cpuUsage();
    let k = 0;
    for (let m = 0; m < minutes; m++) {
      const leveler = new Make(ESPEAK_RATE, voice.gain, voice.ceiling, () => undefined);
      for (let fed = 0; fed < minute; k++) {
        leveler.push(blocks[k % blocks.length]);
        fed += blocks[k % blocks.length].length;
      }
      leveler.finish();
    }
    const used = process.cpuUsage(started);
    return (used.user + used.system) / 1000;
  };
  let Before: typeof Leveler | undefined;
  const file = path.join(os.tmpdir(), `leveler-${LEVELER_BEFORE}-${process.pid}.ts`);
  try {
    writeFileSync(file, execFileSync("git", ["show", `${LEVELER_BEFORE}:services/audio/loudness/limiter.ts`], { cwd: path.dirname(fileURLToPath(import.meta.url)), encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }));
    Before = ((await import(pathToFileURL(file).href)) as { Leveler: typeof Leveler }).Leveler;
  } catch {
    Before = undefined;
  } finally {
    rmSync(file, { force: true });
  }
  const now: number[] = [];
  const before: number[] = [];
  cpu(Leveler, 5);
  if (Before) cpu(Before, 5);
  for (let i = 0; i < 3; i++) {
    if (Before && i % 2 === 1) before.push(cpu(Before));
    now.push(cpu(Leveler));
    if (Before && i % 2 === 0) before.push(cpu(Before));
  }
  return { ms: median(now), beforeMs: Before ? median(before) : undefined };
}

export function formatLoudness(r: LoudnessFigures): string {
  return (
    `loudness, ${r.chars} chars: local engine (WASM, ${r.threads} threads) ${r.leveledSeconds.toFixed(2)} s leveled vs ${r.rawSeconds.toFixed(2)} s raw, ` +
    `${((r.localRatio - 1) * 100).toFixed(1)}% (target <= 10%; the leveler alone: ${r.levelerCpuMs.toFixed(0)} ms CPU per 20 min of speech${r.levelerBeforeMs === undefined ? "" : `, ${r.levelerBeforeMs.toFixed(0)} ms before ${LEVELER_BEFORE}'s`}); provider path +${r.providerMs.toFixed(1)} ms after the last chunk (${r.providerMethod}; target <= 50 ms); ` +
    `with a different clip per request +${r.distinctMs.toFixed(0)} ms (${r.distinctSeconds.toFixed(0)} s of audio, all arriving at once); ` +
    `measuring provider audio costs ${r.measureMsPerAudioMinute.toFixed(0)} ms per minute, overlapped with the requests still out ${r.ok ? "OK" : "FAIL"}`
  );
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const r = await benchLoudness();
  console.log(formatLoudness(r));
  console.log(`  runs (s): leveled ${r.runs.leveled.map((s) => s.toFixed(2)).join(", ")}; raw ${r.runs.raw.map((s) => s.toFixed(2)).join(", ")}`);
  process.exitCode = r.ok ? 0 : 1;
}
