// Independent measurements of rendered files for the audio tests: ffmpeg's ebur128 filter for
// loudness and true peak, and silence detection on PCM decoded by mpg123.
import { spawnSync } from "node:child_process";
import { expect } from "chai";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { MPEGDecoder } from "mpg123-decoder";

export interface Ebur128 {
  /** Integrated loudness, LUFS. */
  I: number;
  /** True peak, dBTP. */
  TP: number;
}

/** `ffmpeg -nostats -i f.mp3 -af ebur128=peak=true -f null -`, summary figures (of a file of type `ext`). */
export function ffmpegLoudness(mp3: Buffer, ext = "mp3"): Ebur128 {
  const dir = mkdtempSync(path.join(os.tmpdir(), "ebur128-"));
  try {
    const file = path.join(dir, `f.${ext}`);
    writeFileSync(file, mp3);
    const r = spawnSync("ffmpeg", ["-nostats", "-hide_banner", "-i", file, "-af", "ebur128=peak=true", "-f", "null", "-"], { encoding: "utf8" });
    if (r.status !== 0) throw new Error(`ffmpeg failed: ${r.stderr.slice(-300)}`);
    const summary = r.stderr.slice(r.stderr.lastIndexOf("Summary:"));
    const num = (v: string | undefined) => (v === "-inf" ? -Infinity : Number(v));
    const I = num(/I:\s+(-?[\d.]+|-inf) LUFS/.exec(summary)?.[1]);
    const TP = num(/Peak:\s+(-?[\d.]+|-inf) dBFS/.exec(summary)?.[1]);
    return { I, TP };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The published-file promise (docs/audio.md): integrated loudness within 1 LU of the target, true peak at or under the ceiling. */
export function expectOnTarget(what: string, mp3: Buffer, target: { lufs: number; truePeak: number } = { lufs: -19, truePeak: -1 }): Ebur128 {
  const m = ffmpegLoudness(mp3);
  expect(m.I, `${what}: integrated loudness ${m.I} LUFS`).to.be.within(target.lufs - 1, target.lufs + 1);
  expect(m.TP, `${what}: true peak ${m.TP} dBTP`).to.be.at.most(target.truePeak);
  return m;
}

/** Mono 32-bit float WAV of `samples`. */
export function floatWav(samples: Float32Array, sampleRate: number): Buffer {
  const h = Buffer.alloc(44);
  h.write("RIFF", 0);
  h.writeUInt32LE(36 + samples.length * 4, 4);
  h.write("WAVEfmt ", 8);
  h.writeUInt32LE(16, 16);
  h.writeUInt16LE(3, 20);
  h.writeUInt16LE(1, 22);
  h.writeUInt32LE(sampleRate, 24);
  h.writeUInt32LE(sampleRate * 4, 28);
  h.writeUInt16LE(4, 32);
  h.writeUInt16LE(32, 34);
  h.write("data", 36);
  h.writeUInt32LE(samples.length * 4, 40);
  return Buffer.concat([h, Buffer.from(samples.buffer, samples.byteOffset, samples.byteLength)]);
}

export async function decode(mp3: Buffer): Promise<{ samples: Float32Array; sampleRate: number }> {
  const d = new MPEGDecoder();
  await d.ready;
  try {
    const r = d.decode(mp3);
    return { samples: r.channelData[0].slice(0, r.samplesDecoded), sampleRate: r.sampleRate };
  } finally {
    d.free();
  }
}

export interface Gap {
  start: number;
  end: number;
}

/** Runs of silence (10 ms windows below -50 dBFS RMS) of at least minSeconds, and where sound starts and ends. */
export async function silences(mp3: Buffer, minSeconds = 0.12): Promise<{ gaps: Gap[]; first: number; last: number; duration: number }> {
  const { samples, sampleRate } = await decode(mp3);
  const win = Math.round(sampleRate / 100);
  const quiet: boolean[] = [];
  for (let i = 0; i + win <= samples.length; i += win) {
    let e = 0;
    for (let j = i; j < i + win; j++) e += samples[j] * samples[j];
    quiet.push(Math.sqrt(e / win) < 0.00316);
  }
  const gaps: Gap[] = [];
  let first = -1;
  let last = -1;
  for (let w = 0; w < quiet.length; ) {
    if (!quiet[w]) {
      if (first < 0) first = w;
      last = w;
      w++;
      continue;
    }
    let e = w;
    while (e < quiet.length && quiet[e]) e++;
    if (first >= 0 && e < quiet.length && (e - w) / 100 >= minSeconds) gaps.push({ start: w / 100, end: e / 100 });
    w = e;
  }
  return { gaps, first: first / 100, last: (last + 1) / 100, duration: samples.length / sampleRate };
}
