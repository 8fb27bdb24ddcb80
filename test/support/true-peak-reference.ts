// libebur128 1.2.6's true-peak interpolator written out in TypeScript, run over every sample: the
// reference for our meter, which runs the library's own interpolator only over the blocks whose
// output could raise the peak (services/audio/loudness/wasm/meter-shim.c). Same filter (49-tap
// Hann-windowed sinc, 4 phases below 96 kHz, 2 below 192 kHz), same double accumulation, each
// output rounded to float as the library stores it; the true peak is the larger of that and the
// sample peak, as the library reports it.

/** Linear true peak of mono samples at `rate`. */
export function referenceTruePeak(samples: Float32Array, rate: number): number {
  let samplePeak = 0;
  for (const v of samples) samplePeak = Math.max(samplePeak, Math.abs(v));
  const factor = rate < 96000 ? 4 : rate < 192000 ? 2 : 0;
  if (!factor) return samplePeak;
  const taps = 49;
  const delay = Math.floor((taps + factor - 1) / factor);
  const phases = Array.from({ length: factor }, () => ({ index: [] as number[], coeff: [] as number[] }));
  for (let j = 0; j < taps; j++) {
    const m = j - (taps - 1) / 2;
    let c = Math.abs(m) > 0.000001 ? Math.sin((m * Math.PI) / factor) / ((m * Math.PI) / factor) : 1;
    c *= 0.5 * (1 - Math.cos((2 * Math.PI * j) / (taps - 1)));
    if (Math.abs(c) > 0.000001) {
      phases[j % factor].coeff.push(c);
      phases[j % factor].index.push(Math.floor(j / factor));
    }
  }
  const z = new Float64Array(delay);
  let zi = 0;
  let peak = 0;
  for (const x of samples) {
    z[zi] = x;
    for (const { index, coeff } of phases) {
      let acc = 0;
      for (let t = 0; t < coeff.length; t++) {
        let i = zi - index[t];
        if (i < 0) i += delay;
        acc += z[i] * coeff[t];
      }
      peak = Math.max(peak, Math.abs(Math.fround(acc)));
    }
    if (++zi === delay) zi = 0;
  }
  return Math.max(peak, samplePeak);
}
