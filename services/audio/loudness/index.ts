// Loudness normalisation of published files (ITU-R BS.1770 / EBU R128): one integrated loudness
// for every voice and provider, with the true peak kept under a ceiling.
//
// - Local engine: the gain is applied to PCM before encoding (engine/voices.ts holds each voice's
//   measured loudness, loudness/limiter.ts keeps peaks under the ceiling), so the local path
//   needs no measurement per job.
// - Provider MP3s: each chunk is decoded and metered while it downloads (stream.ts), the chunks'
//   meters are gated together as one programme, and the gain goes into the frames' global_gain
//   fields in 1.5 dB steps (lossless, as mp3gain does). Only when no whole step reaches the target
//   within 1 LU without passing the true-peak ceiling is the file decoded, limited and encoded again.
import { createHash } from "node:crypto";
import { LOUDNESS_RANGE, type LoudnessSettings } from "../../../lib/loudness.js";
import { MPEGDecoder } from "mpg123-decoder";
import { createMp3Encoder, type WasmMediaEncoder } from "wasm-media-encoders";
import type { ChunkCache } from "../cache/index.js";
import { joinMp3 } from "../mp3/index.js";
import { applyGainSteps, GAIN_STEP_DB } from "../mp3/gain.js";
import { scanFrames } from "../mp3/frames.js";
import { ENCODER_PEAK_MARGIN_DB, Leveler } from "./limiter.js";
import { LoudnessMeter, measure, type Measurement } from "./meter.js";
import { Mp3Meter } from "./stream.js";

export { LoudnessMeter, measure, meterStats, type Measurement } from "./meter.js";
export { Mp3Meter } from "./stream.js";
export { ENCODER_PEAK_MARGIN_DB, Leveler } from "./limiter.js";

export interface LoudnessTarget {
  /** Integrated loudness, LUFS (mono files, measured as mono). */
  lufs: number;
  /** Highest true peak allowed, dBTP. */
  truePeak: number;
}

export const DEFAULT_LOUDNESS: LoudnessTarget = Object.freeze({ lufs: -19, truePeak: -1 });

/** How far from the target a lossless gain step may leave a file, LU. */
export const TOLERANCE_LU = 1;
// Our meter (libebur128) oversamples 4× below 96 kHz for the true peak, other meters (ffmpeg: to
// 192 kHz) find a bit more.
const PEAK_MARGIN_DB = 0.6;

export function checkTarget(t: LoudnessTarget): string | undefined {
  const { lufs, truePeakDbtp: tp } = LOUDNESS_RANGE;
  if (!Number.isFinite(t.lufs) || t.lufs < lufs.min || t.lufs > lufs.max) return `loudness target must be from ${lufs.min} to ${lufs.max} LUFS, got ${t.lufs}`;
  if (!Number.isFinite(t.truePeak) || t.truePeak < tp.min || t.truePeak > tp.max) return `true-peak ceiling must be from ${tp.min} to ${tp.max} dBTP, got ${t.truePeak}`;
  return undefined;
}

/** A project's own target (snapshotted on the article) over the deployment's: each field the project leaves out is the deployment's. */
export function projectTarget(deployment: LoudnessTarget, project: LoudnessSettings | undefined): LoudnessTarget {
  return { lufs: project?.lufs ?? deployment.lufs, truePeak: project?.truePeakDbtp ?? deployment.truePeak };
}

export const dbToGain = (db: number) => Math.pow(10, db / 20);

/** Compiles the meter's module (which also decodes the streams) and mpg123 (for limitAndEncode) ahead of the first article, off its critical path. */
export async function preloadLoudness(): Promise<void> {
  measure(new Float32Array(4800), 48000);
  await decodeMono(new Uint8Array(0)).catch(() => undefined);
}

let decoder: Promise<MPEGDecoder> | undefined;
// For limitAndEncode, one file at a time: the WASM decoder holds stream state.
async function decodeMono(mp3: Uint8Array): Promise<{ samples: Float32Array; sampleRate: number }> {
  decoder ??= (async () => {
    const d = new MPEGDecoder();
    await d.ready;
    return d;
  })();
  const d = await decoder;
  await d.reset();
  const r = d.decode(mp3);
  const [a, b] = r.channelData;
  if (!b || r.channelData.length === 1) return { samples: a.slice(0, r.samplesDecoded), sampleRate: r.sampleRate };
  const mono = new Float32Array(r.samplesDecoded);
  for (let i = 0; i < mono.length; i++) mono[i] = (a[i] + b[i]) / 2;
  return { samples: mono, sampleRate: r.sampleRate };
}

// Meters of recently measured chunks by content: a re-render after an edit gets most chunks back
// from the chunk cache, byte for byte, and need not decode them again. A finished meter keeps
// ~35 bytes per 100 ms of audio in the module's memory, so the cache is bounded by audio too.
const measured = new Map<string, { meter: Promise<LoudnessMeter>; seconds: number }>();
const MEASURED_MAX = 4096;
const MEASURED_MAX_SECONDS = 6 * 3600;
let measuredSeconds = 0;

function forget(key: string): void {
  const entry = measured.get(key);
  if (!entry) return;
  measured.delete(key);
  measuredSeconds -= entry.seconds;
  // After every retain() of a caller that found it before now.
  entry.meter.then((m) => m.release(), () => undefined);
}

/** The cache keeps `meter`'s reference (its producer's). */
function remember(key: string, meter: Promise<LoudnessMeter>): void {
  forget(key);
  const entry = { meter, seconds: 0 };
  measured.set(key, entry);
  meter.then(
    (m) => {
      if (measured.get(key) !== entry) return;
      entry.seconds = m.seconds;
      measuredSeconds += m.seconds;
      trim();
    },
    () => {
      if (measured.get(key) === entry) measured.delete(key);
    },
  );
  trim();
}

function trim(): void {
  for (const key of measured.keys()) {
    if (measured.size <= MEASURED_MAX && measuredSeconds <= MEASURED_MAX_SECONDS) return;
    forget(key);
  }
}

function recall(key: string): Promise<LoudnessMeter> | undefined {
  const entry = measured.get(key);
  if (!entry) return undefined;
  // Most recently used last.
  measured.delete(key);
  measured.set(key, entry);
  return entry.meter.then((m) => m.retain());
}

// Finished meters on disk, by content, beside the chunk cache: after a restart, a re-render's
// cached chunks are not decoded again either (~8 bytes per 100 ms of audio).
let store: ChunkCache | undefined;

/** For tests: forgets the meters held in memory, as a restart does. */
export function forgetMeasurements(): void {
  for (const key of [...measured.keys()]) forget(key);
}

/**
 * Keeps finished meters in `s` as well as in memory (undefined: memory only), and loads the most
 * recently used of those already there into memory, as many as the memory cache holds, so that
 * a restarted worker finds them as a running one would (`load: false`: not). Resolves with how
 * many it loaded.
 */
export async function keepMetersIn(s: ChunkCache | undefined, opts: { load?: boolean } = {}): Promise<number> {
  store = s;
  if (!s || opts.load === false) return 0;
  let loaded = 0;
  let seconds = 0;
  const recent: { key: string; meter: LoudnessMeter }[] = [];
  for (const key of s.keys().reverse()) {
    if (loaded >= MEASURED_MAX || seconds >= MEASURED_MAX_SECONDS || store !== s) break;
    if (measured.has(key)) continue;
    const meter = await fromStore(key);
    if (!meter) continue;
    recent.push({ key, meter });
    loaded++;
    seconds += meter.seconds;
  }
  // Least recent first, so that the memory cache's order is the store's.
  for (const { key, meter } of recent.reverse()) {
    if (measured.has(key)) meter.release();
    else remember(key, Promise.resolve(meter));
  }
  return loaded;
}

function fromStore(key: string): Promise<LoudnessMeter | undefined> {
  if (!store) return Promise.resolve(undefined);
  // A file that is not a meter (cut short, another version's) is measured again.
  return store.get(key).then((bytes) => (bytes ? LoudnessMeter.fromBytes(bytes) : undefined)).catch(() => undefined);
}

function toStore(key: string, meter: LoudnessMeter): LoudnessMeter {
  // Only a saving: a full disk must not fail the render.
  store?.put(key, meter.toBytes()).catch(() => undefined);
  return meter;
}

/** The meter of the bytes whose SHA-256 is `key`: from memory, from the store, or `fresh()`. The caller releases it. */
function byContent(key: string, fresh: () => Promise<LoudnessMeter>): Promise<LoudnessMeter> {
  const known = recall(key);
  if (known) return known;
  const meter = fromStore(key).then((m) => m ?? fresh().then((f) => toStore(key, f)));
  remember(key, meter);
  return meter.then((m) => m.retain());
}

/** The finished meter of an MP3 (decoded, as a player hears it), from the caches when its bytes were measured before. The caller releases it. */
export function meterMp3(mp3: Uint8Array): Promise<LoudnessMeter> {
  return byContent(createHash("sha256").update(mp3).digest("hex"), () => meterWhole(mp3));
}

/** A finished meter of a whole MP3 in hand; the caller holds its one reference. */
function meterWhole(mp3: Uint8Array): Promise<LoudnessMeter> {
  const stream = new Mp3Meter();
  stream.push(mp3);
  return stream.end().then((r) => r.meter);
}

/**
 * The meter of a download `stream` saw, once `mp3` (the whole body) is in; the caller releases it.
 * A body that came whole before decoding started may be known by content; one the stream did
 * not see exactly is measured whole.
 */
export function finishMeter(stream: Mp3Meter, mp3: Uint8Array): Promise<LoudnessMeter> {
  if (stream.bytes !== mp3.length) {
    stream.abort();
    return meterMp3(mp3);
  }
  const key = stream.digest();
  if (!stream.started) {
    const meter = byContent(key, () => stream.end().then((r) => r.meter));
    // Found in a cache, the stream is not needed (after end(), abort() does nothing).
    void meter.finally(() => stream.abort()).catch(() => undefined);
    return meter;
  }
  const meter = stream.end().then((r) => toStore(key, r.meter));
  remember(key, meter);
  return meter.then((m) => m.retain());
}

/** Loudness and true peak of an MP3, measured afresh (not cached). */
export async function measureMp3(mp3: Uint8Array): Promise<Measurement> {
  const meter = await meterWhole(mp3);
  try {
    return meter.measurement();
  } finally {
    meter.release();
  }
}

/** The parts' loudness played one after another (gated over all of them), their highest true peak and total duration. */
export function combine(parts: readonly LoudnessMeter[]): Measurement {
  return LoudnessMeter.together(parts);
}

export interface GainPlan {
  /** Global-gain steps (× 1.5 dB) to apply losslessly. */
  steps: number;
  /** Exact gain the target asks for, dB. */
  gainDb: number;
  /** No whole step lands within tolerance under the ceiling: decode, limit and encode again. */
  reencode: boolean;
}

export function planGain(m: Measurement, target: LoudnessTarget): GainPlan {
  if (!Number.isFinite(m.lufs)) return { steps: 0, gainDb: 0, reencode: false };
  const gainDb = target.lufs - m.lufs;
  const ceiling = target.truePeak - PEAK_MARGIN_DB;
  let steps = Math.round(gainDb / GAIN_STEP_DB);
  while (m.truePeak + steps * GAIN_STEP_DB > ceiling) steps--;
  const reencode = Math.abs(gainDb - steps * GAIN_STEP_DB) > TOLERANCE_LU - 0.2;
  return { steps, gainDb, reencode };
}

export interface Normalized {
  mp3: Buffer;
  /** "steps": global_gain changed; "reencode": decoded, limited and encoded again; "none". */
  method: "none" | "steps" | "reencode";
  gainDb: number;
}

/** Brings an assembled MP3 (measured as `m`) to the target, changing `mp3` itself when gain steps do; see the module comment. */
export async function normalizeMp3(mp3: Buffer, m: Measurement, target: LoudnessTarget): Promise<Normalized> {
  const plan = planGain(m, target);
  if (plan.reencode) return { mp3: await limitAndEncode(mp3, plan.gainDb, target), method: "reencode", gainDb: plan.gainDb };
  if (plan.steps === 0) return { mp3, method: "none", gainDb: 0 };
  // In place: the caller hands over a file it just assembled.
  const { clamped } = applyGainSteps(mp3, plan.steps, { inPlace: true, refuseClamp: true });
  if (clamped > 0) return { mp3: await limitAndEncode(mp3, plan.gainDb, target), method: "reencode", gainDb: plan.gainDb };
  return { mp3, method: "steps", gainDb: plan.steps * GAIN_STEP_DB };
}

let encoder: Promise<WasmMediaEncoder<"audio/mpeg">> | undefined;
let queue: Promise<unknown> = Promise.resolve();

// How often limitAndEncode encodes a file at most, to land on the target after the encoder.
const ENCODE_ATTEMPTS = 3;

/**
 * Decode, exact gain with the limiter, encode in the same stream format, behind a fresh Info
 * header. The encoder moves both figures: its low-pass takes 0.3-0.6 LU off eSpeak-like speech,
 * and it raises the true peak by 0.1 to 1.7 dB over the PCM's on heavily limited speech at
 * 48 kbps, not even in step with the PCM ceiling. So each result is measured, and one more than
 * half a LU off or over the ceiling is encoded again with the gain and the PCM ceiling corrected
 * by what it missed; the best wins (under the ceiling first, then nearest the loudness).
 */
export function limitAndEncode(mp3: Buffer, gainDb: number, target: LoudnessTarget): Promise<Buffer> {
  const run = queue.then(async () => {
    const head = scanFrames(mp3).headers[0];
    if (!head) throw new Error("loudness: no MPEG audio frames to re-encode");
    const { samples, sampleRate } = await decodeMono(mp3);
    const ints = new Int16Array(samples.length);
    for (let i = 0; i < samples.length; i++) ints[i] = Math.max(-32768, Math.min(32767, Math.round(samples[i] * 32768)));
    encoder ??= createMp3Encoder();
    const enc = await encoder;
    const worse = (a: { over: number; off: number }, b: { over: number; off: number }) => (a.over > 0 || b.over > 0 ? a.over > b.over : a.off > b.off);
    let best: { mp3: Buffer; over: number; off: number } | undefined;
    let ceiling = target.truePeak - ENCODER_PEAK_MARGIN_DB;
    for (let attempt = 0; attempt < ENCODE_ATTEMPTS && !(best && best.over <= 0 && best.off <= TOLERANCE_LU / 2); attempt++) {
      const floats = new Float32Array(ints.length);
      let at = 0;
      const leveler = new Leveler(sampleRate, dbToGain(gainDb), dbToGain(ceiling), (s) => {
        for (let i = 0; i < s.length; i++) floats[at++] = s[i] / 32768;
      });
      leveler.push(ints);
      leveler.finish();
      enc.configure({ sampleRate, channels: head.channels, bitrate: head.bitrate as 48 });
      const channels = head.channels === 1 ? [floats] : [floats, floats];
      const out = joinMp3([Buffer.concat([Buffer.from(enc.encode(channels)), Buffer.from(enc.finalize())])]);
      const m = await measureMp3(out);
      const tried = { mp3: out, over: m.truePeak - (target.truePeak - PEAK_MARGIN_DB), off: Math.abs(target.lufs - m.lufs) };
      if (!best || worse(best, tried)) best = tried;
      if (Number.isFinite(m.lufs)) gainDb += target.lufs - m.lufs;
      ceiling -= Math.max(tried.over, 0);
    }
    return best!.mp3;
  });
  queue = run.catch(() => undefined);
  return run;
}
