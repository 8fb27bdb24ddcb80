// The PCM leveler as it worked before its loops were optimised (services/audio/loudness/limiter.ts
// up to commit 5505537), written out plainly, one sample at a time with no shortcuts: what the
// optimised Leveler must still produce, sample for sample. Same constants, same arithmetic in the
// same order (the look-ahead holds 32-bit floats, the gap filters sum their taps left to right),
// so that the two can be compared exactly.

const LOOKAHEAD_MS = 3;
const RELEASE_MS = 60;
const MAKEUP_WINDOW_MS = 50;
const MAKEUP_MEMORY_MS = 2000;
const MAX_MAKEUP = 2;
const TAPS = 8;
const DETECT_DELAY = TAPS / 2;
const GAP_GATE = 0.6;

/** Windowed-sinc interpolators for the points 1/4, 1/2 and 3/4 of the way across a gap, normalised to unity gain. */
function gapFilters(): number[][] {
  return [0.25, 0.5, 0.75].map((f) => {
    const h: number[] = [];
    for (let j = 0; j < TAPS; j++) {
      const u = DETECT_DELAY - 1 + f - j;
      h.push((Math.sin(Math.PI * u) / (Math.PI * u)) * (0.5 + 0.5 * Math.cos((Math.PI * u) / DETECT_DELAY)));
    }
    let sum = 0;
    for (const x of h) sum += x;
    return h.map((x) => x / sum);
  });
}

export class ReferenceLeveler {
  private readonly filters = gapFilters();
  private readonly lookahead: number;
  /** The last `lookahead` samples in, gained, as 32-bit floats; `pos` is the oldest. */
  private readonly ring: Float32Array;
  private pos = 0;
  private filled = 0;
  private readonly ceiling: number;
  private readonly release: number;
  private g = 1;
  private step = 0;
  private target = 1;
  private hold = 0;
  private makeup = 1;
  private readonly window: number;
  private windowLeft: number;
  private windowIn = 0;
  private windowOut = 0;
  private readonly memory: number;
  private energyIn = 0;
  private energyOut = 0;

  constructor(
    sampleRate: number,
    private readonly gain: number,
    ceiling: number,
    private readonly emit: (samples: Int16Array) => void,
  ) {
    this.lookahead = Math.max(2 * TAPS, Math.round((sampleRate * LOOKAHEAD_MS) / 1000));
    this.ring = new Float32Array(this.lookahead);
    this.ceiling = ceiling * 32767;
    this.release = 1 - Math.exp(-1000 / (sampleRate * RELEASE_MS));
    this.window = this.windowLeft = Math.max(1, Math.round((sampleRate * MAKEUP_WINDOW_MS) / 1000));
    this.memory = Math.exp(-MAKEUP_WINDOW_MS / MAKEUP_MEMORY_MS);
  }

  push(block: Int16Array): void {
    const out: number[] = [];
    for (const sample of block) {
      const y = this.ring[this.pos];
      this.ring[this.pos] = sample * (this.gain * this.makeup);
      this.pos = (this.pos + 1) % this.lookahead;
      const filling = this.filled < this.lookahead;
      if (filling) this.filled++;
      // While the look-ahead fills, every step is checked; after that only next to a sample over the gate.
      const checked = this.newest(DETECT_DELAY);
      const next = this.newest(DETECT_DELAY - 1);
      const gate = this.ceiling * GAP_GATE;
      const a = filling || Math.abs(checked) > gate || Math.abs(next) > gate ? this.peakAt() : Math.abs(checked);
      if (a > this.ceiling) this.peak(this.ceiling / a);
      if (filling) continue;
      const v = this.envelope(y);
      out.push(v < 0 ? Math.trunc(v - 0.5) : Math.trunc(v + 0.5));
      this.windowIn += y * y;
      this.windowOut += v * v;
      if (--this.windowLeft === 0) {
        this.energyIn = this.energyIn * this.memory + this.windowIn;
        this.energyOut = this.energyOut * this.memory + this.windowOut;
        if (this.energyOut > 0) this.makeup = Math.min(MAX_MAKEUP, Math.sqrt(this.energyIn / this.energyOut));
        this.windowLeft = this.window;
        this.windowIn = this.windowOut = 0;
      }
    }
    if (out.length) this.emit(Int16Array.from(out));
  }

  finish(): void {
    const start = this.filled < this.lookahead ? 0 : this.pos;
    const tail: number[] = [];
    for (let i = 0; i < this.filled; i++) tail.push(Math.round(this.envelope(this.ring[(start + i) % this.lookahead])));
    this.filled = 0;
    if (tail.length) this.emit(Int16Array.from(tail));
  }

  /** The sample `age` steps before the newest (0: the newest). */
  private newest(age: number): number {
    return this.ring[(this.pos - 1 - age + 2 * this.lookahead) % this.lookahead];
  }

  /** |sample DETECT_DELAY before the newest|, or more where the signal rises higher in the gap after it. */
  private peakAt(): number {
    let a = Math.abs(this.newest(DETECT_DELAY));
    for (const h of this.filters) {
      let v = 0;
      for (let j = 0; j < TAPS; j++) v += h[j] * this.newest(TAPS - 1 - j);
      a = Math.max(a, Math.abs(v));
    }
    return a;
  }

  private peak(r: number): void {
    const ahead = this.lookahead - DETECT_DELAY;
    this.step = Math.min(this.step, (r - this.g) / ahead);
    this.target = Math.min(this.target, r);
    this.hold = ahead + 1;
  }

  /** One step of the gain envelope; `y` times the gain, within the ceiling. */
  private envelope(y: number): number {
    if (this.step < 0) {
      this.g += this.step;
      if (this.g <= this.target) {
        this.g = this.target;
        this.step = 0;
      }
    } else if (this.hold === 0 && this.g < 1) {
      this.g += (1 - this.g) * this.release;
      if (this.g > 0.9999) this.g = 1;
      this.target = this.g;
    }
    if (this.hold > 0) {
      this.hold--;
      if (this.hold === 0 && this.step === 0) this.target = 1;
    }
    return Math.max(-this.ceiling, Math.min(this.ceiling, y * this.g));
  }
}
