import { encodeHeader, frameLength, readHeader } from "./header.js";

export interface SilenceFormat {
  sampleRate: number;
  channels: 1 | 2;
  bitrate: number; // kbps
}

/**
 * Layer III frames that decode to digital silence, about `ms` long (rounded to whole frames).
 * Built directly instead of encoded: all-zero side information means "no spectral data", which
 * every decoder renders as silence, and the frames never reference the bit reservoir, so they
 * can sit anywhere in a stream.
 */
export function silenceFrames(format: SilenceFormat, ms: number): Buffer {
  if (typeof ms !== "number" || !Number.isFinite(ms) || ms < 0) throw new RangeError(`silence: ms must be a finite number >= 0, got ${ms}`);
  const header = encodeHeader(format.sampleRate, format.channels, format.bitrate);
  const parsed = readHeader(header, 0)!;
  const count = Math.round((ms / 1000) * (format.sampleRate / parsed.samples));
  const length = frameLength(parsed.version, 3, format.bitrate, format.sampleRate, 0);
  const frame = Buffer.alloc(length);
  header.copy(frame, 0);
  const out = Buffer.alloc(length * count);
  for (let i = 0; i < count; i++) frame.copy(out, i * length);
  return out;
}
