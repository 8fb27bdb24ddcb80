// Lossless gain on Layer III audio, as mp3gain does it: every granule's global_gain field is a
// quantizer step of 2^(1/4) in amplitude (1.5 dB), so adding n to it scales the decoded audio by
// n × 1.5 dB without touching the coded spectrum. Frame sizes, the bit reservoir and the
// Info/Xing header stay valid, so durations and seeking are unchanged.
import { scanFrames } from "./frames.js";

/** dB per global_gain step. */
export const GAIN_STEP_DB = 1.5;

interface Layout {
  /** Bits before the first granule's fields (main_data_begin, private bits, scfsi). */
  start: number;
  /** Bits of one granule/channel block. */
  block: number;
  granules: number;
}

function layout(version: 1 | 2 | 25, channels: 1 | 2): Layout {
  if (version === 1) return { start: 9 + (channels === 1 ? 5 : 3) + 4 * channels, block: 59, granules: 2 };
  return { start: 8 + channels, block: 63, granules: 1 };
}

function readBits(buf: Uint8Array, bit: number, n: number): number {
  let v = 0;
  for (let i = 0; i < n; i++, bit++) v = (v << 1) | ((buf[bit >> 3] >> (7 - (bit & 7))) & 1);
  return v;
}

function writeBits(buf: Uint8Array, bit: number, n: number, value: number): void {
  for (let i = n - 1; i >= 0; i--, bit++) {
    const mask = 1 << (7 - (bit & 7));
    if ((value >> i) & 1) buf[bit >> 3] |= mask;
    else buf[bit >> 3] &= ~mask;
  }
}

/**
 * A copy of `mp3` with every coded granule's global_gain moved by `steps` (× 1.5 dB). Silent
 * granules (no coded data: our pause frames, the Info frame) are left alone. Returns the count of
 * granules that would need a value above 255 and so got less than the full change.
 */
export function applyGainSteps(mp3: Buffer, steps: number, opts: { inPlace?: boolean; refuseClamp?: boolean } = {}): { mp3: Buffer; clamped: number } {
  if (!Number.isInteger(steps)) throw new RangeError(`gain steps must be an integer, got ${steps}`);
  if (steps === 0) return { mp3: opts.inPlace ? mp3 : Buffer.from(mp3), clamped: 0 };
  const scan = scanFrames(mp3);
  // Bit offsets of every coded granule's global_gain field.
  const fields: number[] = [];
  scan.frames.forEach((f, i) => {
    const h = scan.headers[i] ?? scan.headers[0];
    if (h.layer !== 3) return;
    const { start, block, granules } = layout(h.version, h.channels);
    const side = (f.offset + 4 + (h.crc ? 2 : 0)) * 8;
    for (let g = 0; g < granules; g++) {
      for (let c = 0; c < h.channels; c++) {
        const at = side + start + (g * h.channels + c) * block;
        if (readBits(mp3, at, 12) === 0 && readBits(mp3, at + 12, 9) === 0) continue;
        fields.push(at + 21);
      }
    }
  });
  // At the top the quantizer runs out; at the bottom the granule is already some 300 dB down, inaudible either way.
  let clamped = 0;
  for (const at of fields) if (readBits(mp3, at, 8) + steps > 255) clamped++;
  if (clamped > 0 && opts.refuseClamp) return { mp3, clamped };
  // In place for a file we just assembled: an hour of audio need not exist twice.
  const out = opts.inPlace ? mp3 : Buffer.from(mp3);
  for (const at of fields) writeBits(out, at, 8, Math.max(0, Math.min(255, readBits(out, at, 8) + steps)));
  return { mp3: out, clamped };
}
