// Loudness normalisation of published files (ITU-R BS.1770 / EBU R128): one integrated loudness
// for every voice and provider, with the true peak kept under a ceiling.
//
// - Local engine: the gain is applied to PCM before encoding (engine/voices.ts holds each voice's
//   measured loudness, loudness/limiter.ts keeps peaks under the ceiling), so the local path
//   needs no measurement per job.
// - Provider MP3s: each chunk is decoded and measured as it arrives, the chunks' figures are
//   combined, and the gain goes into the frames' global_gain fields in 1.5 dB steps (lossless,
//   as mp3gain does). Only when no whole step reaches the target within 1 LU without passing the
//   true-peak ceiling is the file decoded, limited and encoded again.
import { createHash } from "node:crypto";
import { LOUDNESS_RANGE, type LoudnessSettings } from "../../../lib/loudness.js";
import { MPEGDecoder } from "mpg123-decoder";
import { createMp3Encoder, type WasmMediaEncoder } from "wasm-media-encoders";
import { joinMp3 } from "../mp3/index.js";
import { applyGainSteps, GAIN_STEP_DB } from "../mp3/gain.js";
import { scanFrames } from "../mp3/frames.js";
import { ENCODER_PEAK_MARGIN_DB, Leveler } from "./limiter.js";
import { measure, type Measurement } from "./meter.js";

export { measure, type Measurement } from "./meter.js";
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
// Our meter oversamples 4× for the true peak, other meters (ffmpeg: to 192 kHz) find a bit more.
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

/** Compiles the meter and starts the decoder ahead of the first article, off its critical path. */
export async function preloadLoudness(): Promise<void> {
  measure(new Float32Array(4800), 48000);
  await decodeMono(new Uint8Array(0)).catch(() => undefined);
}

let decoder: Promise<MPEGDecoder> | undefined;
// The WASM decoder holds stream state: one file at a time (decoding is synchronous once ready).
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

// Figures of recently measured chunks by content: a re-render after an edit gets most chunks
// back from the chunk cache, byte for byte, and need not decode them again.
const measured = new Map<string, Promise<Measurement>>();
const MEASURED_MAX = 4096;

/** Loudness and true peak of an MP3 (decoded, as a player hears it). */
export function measureMp3(mp3: Uint8Array): Promise<Measurement> {
  const key = createHash("sha1").update(mp3).digest("base64");
  const known = measured.get(key);
  if (known) return known;
  const m = decodeMono(mp3).then(({ samples, sampleRate }) => measure(samples, sampleRate));
  if (measured.size >= MEASURED_MAX) measured.delete(measured.keys().next().value!);
  measured.set(key, m);
  // A failed measurement is not remembered.
  m.catch(() => measured.delete(key));
  return m;
}

/**
 * The loudness of parts played one after another, from each part's own figures: the
 * duration-weighted mean of their powers (the gating then differs from one pass over the whole
 * only where a 400 ms block straddles two parts). Silent parts (pauses) are below the gate.
 */
export function combine(parts: Measurement[]): Measurement {
  let energy = 0;
  let seconds = 0;
  let truePeak = -Infinity;
  for (const p of parts) {
    truePeak = Math.max(truePeak, p.truePeak);
    if (!Number.isFinite(p.lufs)) continue;
    energy += p.seconds * Math.pow(10, p.lufs / 10);
    seconds += p.seconds;
  }
  return { lufs: seconds > 0 ? 10 * Math.log10(energy / seconds) : -Infinity, truePeak, seconds };
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
