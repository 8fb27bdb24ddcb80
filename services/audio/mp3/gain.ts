// Lossless gain on Layer III audio, as mp3gain does it: every granule's global_gain field is a
// quantizer step of 2^(1/4) in amplitude (1.5 dB), so adding n to it scales the decoded audio by
// n × 1.5 dB without touching the coded spectrum. Frame sizes, the bit reservoir and the
// Info/Xing header stay valid, so durations and seeking are unchanged.
import { walkFrames } from "./frames.js";

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

// A 32-bit window from the field's first byte (bytes past the end read as 0): whole-byte
// operations, as these run for every granule of an hour-long file after its last chunk arrived.
function readBits(buf: Uint8Array, bit: number, n: number): number {
  const at = bit >> 3;
  const word = (buf[at] << 24) | (buf[at + 1] << 16) | (buf[at + 2] << 8) | buf[at + 3];
  return (word << (bit & 7)) >>> (32 - n);
}

/** An 8-bit field: it spans at most two bytes. */
function writeByte(buf: Uint8Array, bit: number, value: number): void {
  const at = bit >> 3;
  const shift = 8 - (bit & 7);
  const word = (((buf[at] << 8) | buf[at + 1]) & ~(0xff << shift)) | (value << shift);
  buf[at] = word >> 8;
  if (shift < 8) buf[at + 1] = word & 0xff;
}

/**
 * A copy of `mp3` with every coded granule's global_gain moved by `steps` (× 1.5 dB). Silent
 * granules (no coded data: our pause frames, the Info frame) are left alone. Returns the count of
 * granules that would need a value above 255 and so got less than the full change.
 */
export function applyGainSteps(mp3: Buffer, steps: number, opts: { inPlace?: boolean; refuseClamp?: boolean } = {}): { mp3: Buffer; clamped: number } {
  if (!Number.isInteger(steps)) throw new RangeError(`gain steps must be an integer, got ${steps}`);
  if (steps === 0) return { mp3: opts.inPlace ? mp3 : Buffer.from(mp3), clamped: 0 };
  // Bit offsets of every coded granule's global_gain field.
  const fields: number[] = [];
  let stream: (Layout & { channels: number }) | undefined;
  walkFrames(mp3, (offset, h) => {
    if (h.layer !== 3) return;
    // One layout for the file: a stream keeps its version and channels (walkFrames locks on them).
    stream ??= { ...layout(h.version, h.channels), channels: h.channels };
    const { start, block, granules, channels } = stream;
    const side = (offset + 4 + (h.crc ? 2 : 0)) * 8;
    for (let g = 0; g < granules; g++) {
      for (let c = 0; c < channels; c++) {
        const at = side + start + (g * channels + c) * block;
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
  for (const at of fields) writeByte(out, at, Math.max(0, Math.min(255, readBits(out, at, 8) + steps)));
  return { mp3: out, clamped };
}
