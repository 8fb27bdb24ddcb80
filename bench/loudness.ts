// Issue 14 benchmark: what loudness normalisation costs.
// - Local engine: a 20,000-character article rendered with the PCM leveling (gain + limiter
//   before encoding) against the same render without it, alternating, median of
//   BENCH_LOUDNESS_RUNS (default 3). Target: at most 10 % more time.
// - Provider path, a 20,000-character article through a fake OpenAI. Target: normalisation adds
//   at most 50 ms after the last chunk. Each case reports the pipeline's own loudnessMs (waiting
//   for the chunks' meters after assembly, then the gain) and, stricter, the time from the fake
//   handing over its last byte to the finished render (everything left after the last byte:
//   decoding and metering what was not done yet, assembly, gain).
//   - same clip: every request gets the same 2.9 s clip back after 1 s + 0.1 ms per character
//     (bench/provider-path.ts's fake; the measurement cache recognises the bytes).
//   - (a) distinct, at once: each request a different answer as long as its text would be spoken
//     (15 characters a second; 24 kHz 48 kbps mono, as OpenAI and Azure send), the whole body
//     after 1 s + 0.1 ms per character, so all of them arrive within a fraction of a second:
//     nothing to overlap, the worst case.
//   - (b) distinct, streamed: the same answers sent in 8 KiB pieces over their audio's duration
//     divided by BENCH_LOUDNESS_STREAM_X (default 10: a 4.5-minute chunk takes 27 s), after 1 s,
//     as a TTS API streams what it generates; and again BENCH_LOUDNESS_FAST_X (default 40) times
//     faster than real time: the 16 requests go out at once, so audio arrives at up to ~640× real
//     time in all.
//   - (c) what measuring costs per minute of such audio: the meter's module decoding and metering
//     the bytes, as the provider path does; for reference, mpg123 decoding into JavaScript arrays
//     and the meter alone on PCM.
//   - (d) a re-render from the chunk cache just after a restart: with the meters kept on disk
//     beside the chunks (loaded at start, or read one by one before that) and without them.
// - The leveler alone: CPU per 20 minutes of the engine's speech (benchLeveler).
// Run: npx tsx bench/loudness.ts (BENCH_LOUDNESS_LOCAL=0: the provider path only)
import { execFileSync } from "node:child_process";
import { rmSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { MPEGDecoder } from "mpg123-decoder";
import { compileWasm, wasmAssetsDir } from "../services/audio/engine/assets.js";
import { createLocalEngine, type SpeechEngine } from "../services/audio/engine/index.js";
import { ESPEAK_RATE } from "../services/audio/engine/types.js";
import { espeakVoice } from "../services/audio/engine/voices.js";
import { loadEspeak } from "../services/audio/engine/wasm-espeak.js";
import { openDiskCache, type ChunkCache } from "../services/audio/cache/index.js";
import { forgetMeasurements, keepMetersIn, Leveler, LoudnessMeter, measureMp3, preloadLoudness } from "../services/audio/loudness/index.js";
import { joinMp3, mp3Duration, sliceMp3 } from "../services/audio/mp3/index.js";
import { renderArticle, renderWithProviders } from "../services/audio/pipeline.js";
import { createOpenAiProvider, createSpeechRouter, localProvider } from "../services/audio/providers/index.js";
import { reencode } from "../services/audio/providers/reformat.js";
import { FAKE_OPENAI_KEY, startFakeProviders, startSlowFakeProviders, type FakeProviders } from "../test/support/fake-providers.js";
import { benchArticle } from "./article.js";

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];

export interface ProviderCase {
  /** What normalisation adds to the render after the last byte: with it minus without (median of the pairs), ms. */
  addedMs: number;
  /** From the fake handing over its last byte to the finished render, with normalisation and without (medians), ms. */
  afterLastByteMs: { with: number; without: number };
  /** The pipeline's loudnessMs (median): waiting for meters after assembly, gating, gain. */
  loudnessMs: number;
  method: string;
  requests: number;
  /** Minutes of audio in the answers of one render. */
  audioMinutes: number;
  /** One render with normalisation, s (median). */
  renderSeconds: number;
}

export interface LoudnessFigures {
  chars: number;
  threads: number;
  engine: string;
  /** Local engine comparison (absent with BENCH_LOUDNESS_LOCAL=0). */
  local?: { leveledSeconds: number; rawSeconds: number; ratio: number; runs: { leveled: number[]; raw: number[] } };
  /** CPU time of the leveler for 20 minutes of the local engine's speech, ms (see benchLeveler). */
  levelerCpuMs: number;
  /** The same for the leveler before its loops were optimised (LEVELER_BEFORE), when git has it. */
  levelerBeforeMs?: number;
  sameClip: ProviderCase;
  distinct: ProviderCase;
  streamed: ProviderCase & { speedup: number };
  /** The same, streamed BENCH_LOUDNESS_FAST_X (default 40) times faster than real time. */
  streamedFast: ProviderCase & { speedup: number };
  /** Every chunk from the chunk cache after a restart: what normalisation adds with the meters loaded at start, read one by one, and not kept, ms. */
  cached: { loadedMs: number; readMs: number; notKeptMs: number; withoutMs: number; audioMinutes: number };
  /** Per minute of 24 kHz 48 kbps mono speech, ms (median of 3): mpg123 decoding (reference), the meter on PCM, the module doing both from the bytes. */
  perMinute: { decodeMs: number; meterMs: number; bothMs: number };
  ok: boolean;
}

const CHARS_PER_SECOND = 15;

/** A router whose OpenAI is the fake `f` (the local engine beside it, as in production). */
const fakeOpenAiRouter = (engine: SpeechEngine, f: FakeProviders, cache?: ChunkCache) =>
  createSpeechRouter({ providers: { openai: createOpenAiProvider({ apiKey: FAKE_OPENAI_KEY, baseUrl: f.openaiBaseUrl }), local: localProvider(engine) }, cache });

/**
 * Renders `text` through a fake OpenAI made by `fake()`, with normalisation and without
 * (`loudness: null`), alternating which goes first, `pairs` times.
 */
async function providerCase(engine: SpeechEngine, name: string, text: string, pairs: number, fake: () => Promise<{ fake: FakeProviders; audioSeconds: () => number }>): Promise<ProviderCase> {
  const withRuns: { after: number; loudnessMs: number; method: string; requests: number; audioSeconds: number; seconds: number }[] = [];
  const withoutRuns: number[] = [];
  let n = 0;
  const render = async (normalise: boolean) => {
    const { fake: f, audioSeconds } = await fake();
    try {
      const speech = fakeOpenAiRouter(engine, f);
      const started = performance.now();
      // A new title each time: the same text must not be found anywhere (there is no chunk cache here anyway).
      const r = await renderWithProviders({ title: `${name} ${n++}`, text, lang: "en-US", voice: "alloy" }, speech, normalise ? {} : { loudness: null });
      const ended = performance.now();
      const answered = f.calls.filter((c) => !c.violation && !c.fault).length;
      if (answered !== r.chunks) throw new Error(`${name}: expected ${r.chunks} answers, saw ${answered}`);
      if (normalise) withRuns.push({ after: ended - f.lastByteAt(), loudnessMs: r.loudnessMs, method: r.loudness, requests: r.chunks, audioSeconds: audioSeconds(), seconds: (ended - started) / 1000 });
      else withoutRuns.push(ended - f.lastByteAt());
    } finally {
      await f.close();
    }
  };
  for (let i = 0; i < pairs; i++) {
    await render(i % 2 === 0);
    await render(i % 2 !== 0);
  }
  const mid = [...withRuns].sort((x, y) => x.after - y.after)[Math.floor((withRuns.length - 1) / 2)];
  return {
    addedMs: median(withRuns.map((w, i) => w.after - withoutRuns[i])),
    afterLastByteMs: { with: mid.after, without: median(withoutRuns) },
    loudnessMs: median(withRuns.map((w) => w.loudnessMs)),
    method: [...new Set(withRuns.map((w) => w.method))].join("/"),
    requests: mid.requests,
    audioMinutes: mid.audioSeconds / 60,
    renderSeconds: median(withRuns.map((w) => w.seconds)),
  };
}

/**
 * A re-render whose chunks all come from the chunk cache, in a worker just restarted (nothing in
 * memory), each against the same render without normalisation: with the meters kept on disk
 * beside the chunks and loaded at start, the same before they are loaded (each read as its chunk
 * comes), and without them (every chunk decoded again, as before they were kept). What
 * normalisation adds: the render's time with it minus without (medians of `pairs`), ms.
 */
async function cachedAfterRestart(
  engine: SpeechEngine,
  text: string,
  pairs: number,
  fake: () => Promise<{ fake: FakeProviders }>,
): Promise<{ loadedMs: number; readMs: number; notKeptMs: number; withoutMs: number; audioMinutes: number }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "bench-cache-"));
  const { fake: f } = await fake();
  try {
    const cache = await openDiskCache({ dir, maxBytes: 1 << 30 });
    const meters = await openDiskCache({ dir: path.join(dir, "meters"), maxBytes: 1 << 26, ext: ".meter", touch: false });
    const speech = fakeOpenAiRouter(engine, f, cache);
    const article = { title: "Council approves the budget, again", text, lang: "en-US", voice: "alloy" };
    const render = async (opts: { loudness?: null }) => {
      const started = performance.now();
      await renderWithProviders(article, speech, opts);
      return performance.now() - started;
    };
    const restart = async (store: typeof meters | undefined, load: boolean) => {
      forgetMeasurements();
      await keepMetersIn(store, { load });
    };
    await restart(meters, false);
    const first = await renderWithProviders(article, speech, {});
    // Let the meters' files be written.
    await new Promise((r) => setTimeout(r, 500));
    const figures = { loaded: [] as number[], read: [] as number[], notKept: [] as number[], without: [] as number[] };
    for (let i = 0; i <= pairs; i++) {
      // The first round warms up.
      const keep = (k: keyof typeof figures, ms: number) => i > 0 && figures[k].push(ms);
      await restart(meters, true);
      keep("loaded", await render({}));
      await restart(meters, false);
      keep("read", await render({}));
      await restart(undefined, false);
      keep("without", await render({ loudness: null }));
      keep("notKept", await render({}));
    }
    const base = median(figures.without);
    return { loadedMs: median(figures.loaded) - base, readMs: median(figures.read) - base, notKeptMs: median(figures.notKept) - base, withoutMs: base, audioMinutes: mp3Duration(first.full) / 60 };
  } finally {
    await keepMetersIn(undefined);
    forgetMeasurements();
    await f.close();
    await rm(dir, { recursive: true, force: true });
  }
}

export async function benchLoudness(chars = 20_000, runs = Number(process.env.BENCH_LOUDNESS_RUNS ?? 3)): Promise<LoudnessFigures> {
  const threads = os.availableParallelism();
  const text = benchArticle(chars);
  const engine = await createLocalEngine({ threads, native: "never" });
  const speedup = Number(process.env.BENCH_LOUDNESS_STREAM_X ?? 10);
  const fastSpeedup = Number(process.env.BENCH_LOUDNESS_FAST_X ?? 40);
  try {
    let local: LoudnessFigures["local"];
    if (process.env.BENCH_LOUDNESS_LOCAL !== "0") {
      const figures = { leveled: [] as number[], raw: [] as number[] };
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
      const leveledSeconds = median(figures.leveled);
      const rawSeconds = median(figures.raw);
      local = { leveledSeconds, rawSeconds, ratio: leveledSeconds / rawSeconds, runs: figures };
    }
    const { ms: levelerCpuMs, beforeMs: levelerBeforeMs } = await benchLeveler();

    // As the audio worker does at start.
    await preloadLoudness();
    const pairs = Number(process.env.BENCH_LOUDNESS_PAIRS ?? 3);
    const clip = await engine.synthesize({ text: "A short clip that every request gets back.", voice: "alloy", lang: "en-US", level: { lufs: -24, truePeak: -6 } });
    const sameClip = await providerCase(engine, "Council approves the budget", text, pairs, async () => {
      const fake = await startSlowFakeProviders(clip);
      return { fake, audioSeconds: () => fake.calls.length * mp3Duration(clip) };
    });

    // A cloud provider's audio: a minute of speech at 24 kHz 48 kbps mono, a little under the
    // target so that lossless steps bring it there, repeated to five minutes.
    const minute = await reencode(
      await engine.synthesize({ text: benchArticle(900).replace(/\n\n/g, " "), voice: "alloy", lang: "en-US", level: { lufs: -20.5, truePeak: -5 } }),
      { sampleRate: 24000, channels: 1, bitrate: 48 },
    );
    const long = joinMp3([minute, minute, minute, minute, minute]);
    let served = 0;
    // Each answer as long as its text would be spoken, and unlike any other (its last byte differs).
    const answers = (streamX?: number) => async () => {
      let seconds = 0;
      const fake = await startFakeProviders({
        audio: (input) => {
          const mp3 = Buffer.from(sliceMp3(long, input.length / CHARS_PER_SECOND));
          mp3[mp3.length - 1] ^= ++served & 0xff || 1;
          seconds += mp3Duration(mp3);
          return mp3;
        },
        latencyMs: (t) => (streamX ? 1000 : 1000 + 0.1 * t.length),
        streamMs: streamX ? (_t, mp3) => (mp3Duration(mp3) * 1000) / streamX : undefined,
      });
      return { fake, audioSeconds: () => seconds };
    };
    const distinct = await providerCase(engine, "Council approves the budget, at once", text, pairs, answers());
    const streamed = { ...(await providerCase(engine, "Council approves the budget, streamed", text, pairs, answers(speedup))), speedup };
    const streamedFast = { ...(await providerCase(engine, "Council approves the budget, streamed fast", text, pairs, answers(fastSpeedup))), speedup: fastSpeedup };
    const cached = await cachedAfterRestart(engine, text, pairs, answers());

    // What measuring costs per minute of that audio: mpg123 decoding into JavaScript arrays (as
    // before the meter decoded inside its own module; for reference), the meter on those samples,
    // and what the provider path runs: the module decoding and metering the bytes.
    const minutes = mp3Duration(long) / 60;
    const decodeMs: number[] = [];
    const meterMs: number[] = [];
    const bothMs: number[] = [];
    for (let k = 0; k < 3; k++) {
      const d = new MPEGDecoder();
      await d.ready;
      let t = performance.now();
      const pcm = d.decode(long).channelData[0];
      decodeMs.push((performance.now() - t) / minutes);
      d.free();
      t = performance.now();
      const m = new LoudnessMeter(24000);
      for (let at = 0; at < pcm.length; at += 8192) m.add(pcm.subarray(at, at + 8192));
      m.finish().measurement();
      m.release();
      meterMs.push((performance.now() - t) / minutes);
      t = performance.now();
      await measureMp3(long);
      bothMs.push((performance.now() - t) / minutes);
    }
    const perMinute = { decodeMs: median(decodeMs), meterMs: median(meterMs), bothMs: median(bothMs) };
    const ok = (!local || local.ratio <= 1.1) && sameClip.addedMs <= 50 && streamed.addedMs <= 50 && streamedFast.addedMs <= 50 && cached.loadedMs <= 50;
    return { chars: text.length, threads, engine: "local-wasm", local, levelerCpuMs, levelerBeforeMs, sameClip, distinct, streamed, streamedFast, cached, perMinute, ok };
  } finally {
    await engine.close();
  }
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

const providerLine = (c: ProviderCase) =>
  `+${c.addedMs.toFixed(0)} ms (after the last byte ${c.afterLastByteMs.with.toFixed(0)} ms with, ${c.afterLastByteMs.without.toFixed(0)} ms without; loudness step ${c.loudnessMs.toFixed(1)} ms, ${c.method}; ` +
  `${c.requests} requests, ${c.audioMinutes.toFixed(1)} min of audio, render ${c.renderSeconds.toFixed(1)} s)`;

export function formatLoudness(r: LoudnessFigures): string {
  const leveler = `${r.levelerCpuMs.toFixed(0)} ms CPU per 20 min of speech${r.levelerBeforeMs === undefined ? "" : `, ${r.levelerBeforeMs.toFixed(0)} ms before ${LEVELER_BEFORE}'s`}`;
  const local = r.local
    ? `local engine (WASM, ${r.threads} threads) ${r.local.leveledSeconds.toFixed(2)} s leveled vs ${r.local.rawSeconds.toFixed(2)} s raw, ${((r.local.ratio - 1) * 100).toFixed(1)}% (target <= 10%; ` +
      `the leveler alone: ${leveler})`
    : `local engine skipped (the leveler alone: ${leveler})`;
  return (
    `loudness, ${r.chars} chars: ${local}; provider path, what normalisation adds after the last byte (target <= 50 ms):\n` +
    `    same clip every request: ${providerLine(r.sameClip)}\n` +
    `    (a) distinct answers, all at once: ${providerLine(r.distinct)}\n` +
    `    (b) distinct answers streamed at ${r.streamed.speedup}x real time: ${providerLine(r.streamed)}\n` +
    `    (b) the same at ${r.streamedFast.speedup}x real time: ${providerLine(r.streamedFast)}\n` +
    `    (c) per minute of 24 kHz 48 kbps audio: the module decoding and metering the bytes ${r.perMinute.bothMs.toFixed(0)} ms ` +
    `(for reference: mpg123 decoding into JavaScript ${r.perMinute.decodeMs.toFixed(0)} ms; the meter alone on PCM ${r.perMinute.meterMs.toFixed(0)} ms)\n` +
    `    (d) every chunk from the chunk cache, just after a restart: +${r.cached.loadedMs.toFixed(0)} ms with the meters kept on disk (loaded at start), ` +
    `+${r.cached.readMs.toFixed(0)} ms before they are loaded (read as each chunk comes), ` +
    `+${r.cached.notKeptMs.toFixed(0)} ms decoding them again (render without normalisation ${r.cached.withoutMs.toFixed(0)} ms; ${r.cached.audioMinutes.toFixed(1)} min of audio)\n` +
    `  ${r.ok ? "OK" : "FAIL"} (the targets, on every case but (a) and the first moments after a restart)`
  );
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const r = await benchLoudness();
  console.log(formatLoudness(r));
  if (r.local) console.log(`  runs (s): leveled ${r.local.runs.leveled.map((s) => s.toFixed(2)).join(", ")}; raw ${r.local.runs.raw.map((s) => s.toFixed(2)).join(", ")}`);
  process.exitCode = r.ok ? 0 : 1;
}
