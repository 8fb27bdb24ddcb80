// The PCM leveler after its loops were optimised, against the previous algorithm written out
// plainly (test/support/leveler-reference.ts): the same samples out, bit for bit, on eSpeak's own
// speech as the local engine levels it and harder, and on signals built to stress it (peaks
// between samples, limiting that starts and stops, odd block sizes); and no true peak over the
// ceiling where it is meant to hold.
import { expect } from "chai";
import { compileWasm, wasmAssetsDir } from "../../services/audio/engine/assets.js";
import { espeakVoice } from "../../services/audio/engine/voices.js";
import { loadEspeak } from "../../services/audio/engine/wasm-espeak.js";
import { Leveler, measure } from "../../services/audio/loudness/index.js";
import { ReferenceLeveler } from "../support/leveler-reference.js";
import { concatInt16 } from "../support/samples.js";

interface LevelerLike {
  push(block: Int16Array): void;
  finish(): void;
}

function level(make: (emit: (s: Int16Array) => void) => LevelerLike, input: Int16Array, blockSize: number): Int16Array {
  const parts: Int16Array[] = [];
  const l = make((s) => parts.push(Int16Array.from(s)));
  for (let i = 0; i < input.length; i += blockSize) l.push(input.subarray(i, i + blockSize));
  l.finish();
  return concatInt16(parts);
}

/** Both levelers on the same input; expects the same samples and returns them. */
function expectSameAsReference(what: string, input: Int16Array, o: { rate: number; gain: number; ceiling: number; blockSize: number }): Int16Array {
  const optimised = level((emit) => new Leveler(o.rate, o.gain, o.ceiling, emit), input, o.blockSize);
  const reference = level((emit) => new ReferenceLeveler(o.rate, o.gain, o.ceiling, emit), input, o.blockSize);
  expect(optimised.length, `${what}: length`).to.equal(input.length);
  expect(reference.length, `${what}: reference length`).to.equal(input.length);
  let differing = 0;
  let first = -1;
  for (let i = 0; i < input.length; i++) {
    if (optimised[i] !== reference[i]) {
      differing++;
      if (first < 0) first = i;
    }
  }
  expect(differing, `${what}: samples differing from the reference (first at ${first}: ${optimised[first]} vs ${reference[first]})`).to.equal(0);
  return optimised;
}

const truePeakDb = (samples: Int16Array, rate: number) => measure(Float32Array.from(samples, (v) => v / 32768), rate).truePeak;
const db = (x: number) => 20 * Math.log10(x);

const TEXT = {
  "en-US":
    "The city council approved the new budget on Tuesday, after a debate that lasted well into the night. " +
    "Dr. Alvarez, who chairs the finance committee, said the plan would cost about 3.5 million dollars over five years! " +
    "Critics argued that the money should go to schools first; supporters pointed to the state of the roads.",
  "de-DE":
    "Der Stadtrat hat am Dienstag den neuen Haushalt beschlossen, nach einer Debatte, die bis tief in die Nacht dauerte. " +
    "Kritiker meinten, das Geld solle zuerst in die Schulen fließen, während die Befürworter auf den Zustand der Straßen verwiesen.",
};

describe("leveler: optimised loops against the previous algorithm", function () {
  this.timeout(120_000);
  const rate = 22050;
  // alloy: peaks between samples up to 3.5 dB over them; fable and Conrad: limited most of the time.
  const voices = [
    { voice: "alloy", lang: "en-US" as const },
    { voice: "fable", lang: "en-US" as const },
    { voice: "de-DE-ConradNeural", lang: "de-DE" as const },
  ];
  const speech = new Map<string, Int16Array>();

  before(async () => {
    const espeak = await loadEspeak(wasmAssetsDir(), compileWasm().espeak);
    expect(espeak.sampleRate).to.equal(rate);
    for (const { voice, lang } of voices) {
      const blocks: Int16Array[] = [];
      espeak.speak(espeakVoice(voice, lang), TEXT[lang], (block) => (blocks.push(Int16Array.from(block)), true));
      const all = new Int16Array(blocks.reduce((n, b) => n + b.length, 0));
      let at = 0;
      for (const b of blocks) {
        all.set(b, at);
        at += b.length;
      }
      expect(all.length, voice).to.be.greaterThan(rate * 5);
      speech.set(voice, all);
    }
  });

  it("gives the same samples on eSpeak speech, as the local engine levels it and much harder, in any block size", () => {
    for (const { voice, lang } of voices) {
      const pcm = speech.get(voice)!;
      const v = espeakVoice(voice, lang);
      // As wasm-synth.ts: eSpeak's 100 ms blocks, the voice's gain and ceiling for -19 LUFS / -1 dBTP.
      const engine = expectSameAsReference(`${voice}, engine`, pcm, { rate, gain: v.gain, ceiling: v.ceiling, blockSize: 2205 });
      // 6 dB hotter under a ceiling 4 dB lower: limiting most of the time and makeup at its cap.
      const hard = expectSameAsReference(`${voice}, hard`, pcm, { rate, gain: v.gain * 2, ceiling: v.ceiling * 0.63, blockSize: 37 });
      // As limitAndEncode: the whole file in one push, at another rate (another look-ahead and window).
      expectSameAsReference(`${voice}, whole file at 48 kHz`, pcm, { rate: 48000, gain: v.gain * 1.4, ceiling: v.ceiling, blockSize: pcm.length });
      // One sample at a time crosses every boundary (filling, window, idle/limiting) mid-block.
      expectSameAsReference(`${voice}, sample by sample`, pcm.subarray(0, rate * 3), { rate, gain: v.gain * 2, ceiling: v.ceiling * 0.63, blockSize: 1 });

      // As the engine levels, the ceiling holds between samples too, by the BS.1770 meter (4x
      // oversampling). Limiting 6 dB harder, bright speech near the Nyquist frequency rises
      // between samples more than the 8-tap gap filters see: 0.5-0.9 dB over, as it did before
      // (the samples are the same); only the samples themselves are then held to the ceiling.
      const tpEngine = truePeakDb(engine, rate);
      const tpHard = truePeakDb(hard, rate);
      console.log(`      ${voice}: true peak ${tpEngine.toFixed(2)} dBTP (ceiling ${db(v.ceiling).toFixed(2)}), hard ${tpHard.toFixed(2)} (ceiling ${db(v.ceiling * 0.63).toFixed(2)})`);
      expect(tpEngine, `${voice} true peak`).to.be.at.most(db(v.ceiling) + 0.1);
      expect(hard.reduce((m, x) => Math.max(m, Math.abs(x)), 0), `${voice} hard, sample peak`).to.be.at.most(Math.ceil(v.ceiling * 0.63 * 32767));
      expect(tpHard, `${voice} hard, true peak`).to.be.at.most(db(v.ceiling * 0.63) + 1);
    }
  });

  it("gives the same samples on synthetic signals with peaks between samples, bursts and silence", () => {
    const second = rate;
    // A quarter of the sample rate, sampled 45° off its crests (every sample 3 dB under the peak), swelling and fading.
    const sine = Int16Array.from({ length: 2 * second + second / 4 }, (_, i) =>
      i < 2 * second ? Math.round(30000 * Math.sin((Math.PI * i) / (2 * second)) * Math.sin((Math.PI / 2) * i + Math.PI / 4)) : 0,
    );
    // A chirp from 100 Hz to 10 kHz near full scale: peaks between samples of every size.
    const parts: number[] = Array.from(sine);
    let phase = 0;
    for (let i = 0; i < 2 * second; i++) {
      phase += (2 * Math.PI * (100 + (9900 * i) / (2 * second))) / rate;
      parts.push(Math.round(32000 * Math.sin(phase)));
    }
    for (let i = 0; i < second / 4; i++) parts.push(0);
    const shaped = Int16Array.from(parts);
    // Full-scale noise in bursts and single clicks: limiting that starts and stops all the time.
    let seed = 12345;
    const random = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff) * 2 - 1;
    const bursts = Int16Array.from({ length: 2 * second }, (_, i) => {
      if (i % 4000 === 0) return 32767;
      return (i >> 11) % 3 === 0 ? Math.round(32767 * random()) : Math.round(300 * random());
    });
    for (const [what, input] of [["shaped", shaped], ["bursts", bursts]] as const) {
      for (const blockSize of [1000, 4096, 7, input.length]) {
        expectSameAsReference(`${what}, blocks of ${blockSize}`, input, { rate, gain: 1.3, ceiling: 0.5, blockSize });
      }
      expectSameAsReference(`${what}, 44.1 kHz`, input, { rate: 44100, gain: 0.9, ceiling: 0.7, blockSize: 2048 });
    }
    // The sine peaks only between samples, the case the gap filters are there for: the ceiling
    // (-6 dBFS) holds by the meter. (Near the Nyquist frequency, as the chirp ends, 8 taps
    // under-read the gaps; and noise can rise between two samples both under the gate.)
    const out = level((emit) => new Leveler(rate, 1.3, 0.5, emit), sine, 1000);
    expect(truePeakDb(out, rate)).to.be.at.most(db(0.5) + 0.2);
  });
});
