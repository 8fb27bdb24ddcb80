// 5 ms ramps: short enough to be inaudible on speech, long enough that a part never starts or
// ends on a non-zero sample, which is what would click at a frame-level join.
const FADE_MS = 5;

// eSpeak ends a text with its own sentence-final pause, whose length differs between the native
// program (~260 ms) and the WASM build (~80 ms); leading silence differs too. Every part gets the
// same edges instead, so that a join between two chunks sounds like the pause between two
// sentences inside one chunk (eSpeak's are ~200-330 ms): trail + lead + the codec's delay and
// padding (~25-50 ms) come to about 180 ms, at the short end so no join sounds like a stall.
export const LEAD_MS = 10;
export const TRAIL_MS = 120;
// Below about -50 dBFS counts as silence: eSpeak's pauses are digital zeros or very close to
// them, and the faint decay of a last sound is inaudible at a join anyway.
const SILENCE_FLOOR = 0.003;

/** Joins eSpeak's 16-bit chunks into float samples in [-1, 1) with normalised, faded edges. */
export function toFloat(chunks: readonly Int16Array[], sampleRate: number): Float32Array {
  const floor = SILENCE_FLOOR * 32768;
  // Locate the speech first, so only it is converted (one pass, one allocation).
  let first = -1;
  let last = -1;
  let at = 0;
  for (const chunk of chunks) {
    for (let i = 0; i < chunk.length; i++) {
      if (Math.abs(chunk[i]) >= floor) {
        if (first < 0) first = at + i;
        last = at + i;
      }
    }
    at += chunk.length;
  }
  const { lead, trail } = edges(sampleRate);
  if (first < 0) return new Float32Array(lead + trail);
  const start = Math.max(0, first - lead);
  const end = last + 1 + trail; // may run past the input: zeros pad the tail
  const out = new Float32Array(end - start);
  at = 0;
  for (const chunk of chunks) {
    const from = Math.max(start - at, 0);
    const to = Math.min(end - at, chunk.length);
    for (let i = from; i < to; i++) out[at + i - start] = chunk[i] / 32768;
    at += chunk.length;
    if (at >= end) break;
  }
  fadeEdges(out, sampleRate);
  return out;
}

/** The same edge treatment for float samples (the native path reads them from a WAV). */
export function shapeEdges(samples: Float32Array, sampleRate: number): Float32Array {
  let first = 0;
  while (first < samples.length && Math.abs(samples[first]) < SILENCE_FLOOR) first++;
  const { lead, trail } = edges(sampleRate);
  if (first === samples.length) return new Float32Array(lead + trail);
  let last = samples.length - 1;
  while (Math.abs(samples[last]) < SILENCE_FLOOR) last--;
  const start = Math.max(0, first - lead);
  const out = new Float32Array(last + 1 + trail - start);
  out.set(samples.subarray(start, Math.min(samples.length, last + 1 + trail)));
  fadeEdges(out, sampleRate);
  return out;
}

function edges(sampleRate: number): { lead: number; trail: number } {
  return { lead: Math.round((sampleRate * LEAD_MS) / 1000), trail: Math.round((sampleRate * TRAIL_MS) / 1000) };
}

export function fadeEdges(samples: Float32Array, sampleRate: number): void {
  const n = Math.min(Math.floor((sampleRate * FADE_MS) / 1000), Math.floor(samples.length / 2));
  for (let i = 0; i < n; i++) {
    const gain = i / n;
    samples[i] *= gain;
    samples[samples.length - 1 - i] *= gain;
  }
}

/** 16-bit little-endian PCM (the byte order of every platform Node runs on). */
export function toInt16(samples: Float32Array): Buffer {
  const out = new Int16Array(samples.length);
  for (let i = 0; i < samples.length; i++) out[i] = Math.max(-32768, Math.min(32767, Math.round(samples[i] * 32768)));
  return Buffer.from(out.buffer, out.byteOffset, out.byteLength);
}
