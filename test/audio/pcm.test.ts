import { expect } from "chai";
import { EdgeShaper, LEAD_MS, shapeEdges, toInt16, TRAIL_MS } from "../../services/audio/engine/pcm.js";
import { concatInt16 } from "../support/samples.js";

const RATE = 22050;
const LEAD = Math.round((RATE * LEAD_MS) / 1000);
const TRAIL = Math.round((RATE * TRAIL_MS) / 1000);

/** A deterministic pseudo-random source, so a failure can be replayed. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/** Faint noise (below the silence floor) with loud bursts at the given [from, to) spans. */
function signal(length: number, bursts: Array<[number, number]>, seed = 1): Int16Array {
  const next = random(seed);
  const out = new Int16Array(length);
  for (let i = 0; i < length; i++) out[i] = Math.round((next() - 0.5) * 120);
  for (const [from, to] of bursts) for (let i = from; i < to; i++) out[i] = Math.round((next() - 0.5) * 40000);
  return out;
}

/** Feeds the shaper blocks of random sizes, as eSpeak's callback would, and joins its output. */
function streamed(input: Int16Array, seed: number, maxBlock: number): Int16Array {
  const parts: Int16Array[] = [];
  const shaper = new EdgeShaper(RATE, (s) => parts.push(s.slice()));
  const next = random(seed);
  for (let at = 0; at < input.length; ) {
    const n = Math.min(input.length - at, 1 + Math.floor(next() * maxBlock));
    // A reused buffer, like eSpeak's: the shaper must not keep references into it.
    const block = new Int16Array(n);
    block.set(input.subarray(at, at + n));
    shaper.push(block);
    block.fill(12345);
    at += n;
  }
  shaper.finish();
  return concatInt16(parts);
}

function whole(input: Int16Array): Int16Array {
  const floats = new Float32Array(input.length);
  for (let i = 0; i < input.length; i++) floats[i] = input[i] / 32768;
  const bytes = toInt16(shapeEdges(floats, RATE));
  return new Int16Array(bytes.buffer, bytes.byteOffset, bytes.length / 2);
}

function maxDifference(a: Int16Array, b: Int16Array): number {
  let worst = 0;
  for (let i = 0; i < a.length; i++) worst = Math.max(worst, Math.abs(a[i] - b[i]));
  return worst;
}

describe("streaming edge shaping (WASM engine)", () => {
  const cases: Array<[string, Int16Array]> = [
    ["speech after long silence, a pause, speech, long silence", signal(40000, [[9000, 15000], [21000, 26000]])],
    ["speech from the first sample, silence shorter than the trail", signal(8000, [[0, 6500]])],
    ["speech starting inside the lead", signal(9000, [[100, 3000]])],
    ["one loud sample", signal(6000, [[3000, 3001]])],
  ];
  for (const [name, input] of cases) {
    it(`matches the whole-buffer shaping for ${name}, whatever the block sizes`, () => {
      const expected = whole(input);
      for (const [seed, maxBlock] of [
        [1, 1],
        [2, 37],
        [3, 2205],
        [4, 50000],
      ]) {
        const got = streamed(input, seed, maxBlock);
        expect(got.length, `blocks up to ${maxBlock}`).to.equal(expected.length);
        // Float and integer fades may round one step apart.
        expect(maxDifference(got, expected), `blocks up to ${maxBlock}`).to.be.at.most(1);
      }
    });
  }

  it("keeps lead, trail and fades: starts and ends on zero, the trail as long as configured", () => {
    const input = signal(30000, [[10000, 20000]]);
    const out = streamed(input, 5, 2205);
    expect(out.length).to.equal(LEAD + 10000 + TRAIL);
    expect(out[0]).to.equal(0);
    expect(out[out.length - 1]).to.equal(0);
  });

  it("gives lead + trail of silence when nothing is loud", () => {
    const out = streamed(signal(12000, []), 6, 1000);
    expect(out.length).to.equal(LEAD + TRAIL);
    expect(out.every((s) => s === 0)).to.equal(true);
  });
});
