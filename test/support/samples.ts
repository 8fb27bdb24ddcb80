// Blocks of PCM a streaming stage emitted, or a test built, joined into one array.
type Samples = Int16Array | Float32Array;

const length = (parts: readonly Samples[]) => parts.reduce((n, p) => n + p.length, 0);

function join<T extends Samples>(parts: readonly T[], out: T): T {
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

export const concatInt16 = (parts: readonly Int16Array[]): Int16Array => join(parts, new Int16Array(length(parts)));
export const concatFloat32 = (...parts: Float32Array[]): Float32Array => join(parts, new Float32Array(length(parts)));
