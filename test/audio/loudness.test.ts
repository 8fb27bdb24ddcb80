// The loudness parts on their own: the limiter keeps every sample, and the signal between
// samples, under its ceiling without changing the length or the quiet parts (that it makes up
// the loudness it takes is shown on real voices in sound.test.ts), the meter agrees with the
// BS.1770 reference values, and the gain plan picks lossless steps only when they land on target
// under the ceiling.
import { expect } from "chai";
import { combine, Leveler, LoudnessMeter, measure, planGain } from "../../services/audio/loudness/index.js";

function run(input: Int16Array, gain: number, ceiling: number, blockSize = 1000): Int16Array {
  const out: number[] = [];
  const l = new Leveler(22050, gain, ceiling, (s) => out.push(...s));
  for (let i = 0; i < input.length; i += blockSize) l.push(input.subarray(i, i + blockSize));
  l.finish();
  return Int16Array.from(out);
}

describe("loudness tools", () => {
  it("the limiter keeps every sample under the ceiling, delays nothing away and leaves quiet audio exactly gained", () => {
    const rate = 22050;
    const x = Int16Array.from({ length: rate * 2 }, (_, i) => Math.round((i < rate ? 3000 : 30000) * Math.sin((2 * Math.PI * 220 * i) / rate)));
    const y = run(x, 1.5, 0.5);
    expect(y.length).to.equal(x.length);
    const ceiling = 0.5 * 32767;
    expect(Math.max(...Array.from(y, Math.abs))).to.be.at.most(Math.ceil(ceiling));
    // The quiet first half comes out 1.5x louder and sample-aligned: the look-ahead is latency only.
    for (let i = 1000; i < rate - 2000; i += 97) expect(y[i]).to.be.closeTo(Math.round(x[i] * 1.5), 1);
    // The loud half is limited, not silenced.
    expect(Math.max(...Array.from(y.subarray(rate + 2000), Math.abs))).to.be.greaterThan(ceiling * 0.95);
  });

  it("keeps true peaks under the ceiling where they fall between samples, as in eSpeak's bright output", () => {
    // A quarter of the sample rate, sampled 45° off its crests: every sample is 3 dB under the peak.
    const rate = 22050;
    const x = Int16Array.from({ length: rate }, (_, i) => Math.round(10000 * Math.sin((Math.PI / 2) * i + Math.PI / 4)));
    const ceiling = 0.5;
    const y = run(x, 2, ceiling);
    const m = measure(Float32Array.from(y.subarray(2000), (v) => v / 32768), rate);
    // Its samples, 2 x 7071, stay under the ceiling (16,383); a limiter looking at them only would let the 20,000 (-4.3 dBFS) between them through.
    expect(m.truePeak).to.be.at.most(20 * Math.log10(ceiling) + 0.2);
  });

  it("the meter gives -23 LUFS for a 1 kHz sine at -20 dBFS peak, and its true peak", () => {
    const sr = 48000;
    const s = Float32Array.from({ length: sr * 5 }, (_, i) => 0.1 * Math.sin((2 * Math.PI * 997 * i) / sr));
    const m = measure(s, sr);
    // A sine's RMS is 3 dB under its peak; K-weighting adds ~0.7 dB at 1 kHz and the formula subtracts 0.691.
    expect(m.lufs).to.be.closeTo(-23, 0.1);
    expect(m.truePeak).to.be.closeTo(-20, 0.1);
    expect(measure(new Float32Array(sr), sr).lufs).to.equal(-Infinity);
  });

  it("combines chunk meters as one programme and plans lossless steps only within tolerance under the ceiling", () => {
    const sr = 48000;
    const sine = (amp: number, seconds: number) => Float32Array.from({ length: sr * seconds }, (_, i) => amp * Math.sin((2 * Math.PI * 997 * i) / sr));
    const meter = (s: Float32Array) => {
      const m = new LoudnessMeter(sr);
      m.add(s);
      return m.finish();
    };
    // -23 LUFS for 10 s, -17 LUFS for 30 s, and a second of silence (under the gate, counted for nothing).
    const parts = [meter(sine(0.1, 10)), meter(sine(0.2, 30)), meter(new Float32Array(sr))];
    const c = combine(parts);
    parts.forEach((m) => m.release());
    expect(c.lufs).to.be.closeTo(10 * Math.log10((10 * Math.pow(10, -2.3) + 30 * Math.pow(10, -1.7)) / 40), 0.05);
    expect(c.truePeak).to.be.closeTo(20 * Math.log10(0.2), 0.05);
    expect(c.seconds).to.equal(41);
    expect(planGain({ lufs: -22, truePeak: -8, seconds: 60 }, { lufs: -19, truePeak: -1 })).to.deep.include({ steps: 2, reencode: false });
    // +3 dB would put the peak at -0.5 dBTP: no whole step reaches the target under the ceiling.
    expect(planGain({ lufs: -22, truePeak: -3.5, seconds: 60 }, { lufs: -19, truePeak: -1 }).reencode).to.equal(true);
    expect(planGain({ lufs: -16, truePeak: -1, seconds: 60 }, { lufs: -19, truePeak: -1 })).to.deep.include({ steps: -2, reencode: false });
    expect(planGain({ lufs: -Infinity, truePeak: -Infinity, seconds: 1 }, { lufs: -19, truePeak: -1 })).to.deep.include({ steps: 0, reencode: false });
  });
});
