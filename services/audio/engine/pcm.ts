// 5 ms ramps: short enough to be inaudible on speech, long enough that a part never starts or
// ends on a non-zero sample, which is what would click at a frame-level join.
const FADE_MS = 5;

/** Joins eSpeak's 16-bit chunks into float samples in [-1, 1) with faded edges. */
export function toFloat(chunks: readonly Int16Array[], sampleRate: number): Float32Array {
  const total = chunks.reduce((n, c) => n + c.length, 0);
  const out = new Float32Array(total);
  let at = 0;
  for (const chunk of chunks) {
    for (let i = 0; i < chunk.length; i++) out[at + i] = chunk[i] / 32768;
    at += chunk.length;
  }
  fadeEdges(out, sampleRate);
  return out;
}

export function fadeEdges(samples: Float32Array, sampleRate: number): void {
  const n = Math.min(Math.floor((sampleRate * FADE_MS) / 1000), Math.floor(samples.length / 2));
  for (let i = 0; i < n; i++) {
    const gain = i / n;
    samples[i] *= gain;
    samples[samples.length - 1 - i] *= gain;
  }
}

export function toInt16(samples: Float32Array): Buffer {
  const out = Buffer.alloc(samples.length * 2);
  for (let i = 0; i < samples.length; i++) {
    out.writeInt16LE(Math.max(-32768, Math.min(32767, Math.round(samples[i] * 32768))), i * 2);
  }
  return out;
}
