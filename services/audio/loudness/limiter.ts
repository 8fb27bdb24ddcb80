// Gain and a look-ahead peak limiter on streamed 16-bit PCM, applied before encoding so that the
// local engine's output reaches the loudness target without ever clipping.

/** Samples the gain starts falling before a peak: the attack is a ramp this long, so it never clicks. */
const LOOKAHEAD_MS = 3;
/** Time constant of the recovery after a peak; long enough not to pump on speech. */
const RELEASE_MS = 60;

/**
 * Multiplies by `gain`, and where that would exceed `ceiling` (linear, full scale 1) lowers the
 * gain in a linear ramp over the look-ahead so the peak lands exactly on the ceiling, then
 * recovers exponentially. Output is delayed by the look-ahead; finish() drains it, so exactly as
 * many samples come out as went in. `emit` must copy what it keeps.
 */
export class Leveler {
  private readonly ring: Float32Array;
  private pos = 0;
  private filled = 0;
  private readonly release: number;
  private readonly ceiling: number;
  private g = 1;
  private step = 0;
  private target = 1;
  /** Input samples still to come out before the latest detected peak has passed. */
  private hold = 0;
  private out: Int16Array = new Int16Array(0);

  constructor(
    sampleRate: number,
    private readonly gain: number,
    ceiling: number,
    private readonly emit: (samples: Int16Array) => void,
  ) {
    if (!(gain > 0) || !(ceiling > 0)) throw new RangeError("Leveler: gain and ceiling must be positive");
    this.ring = new Float32Array(Math.max(1, Math.round((sampleRate * LOOKAHEAD_MS) / 1000)));
    this.release = 1 - Math.exp(-1000 / (sampleRate * RELEASE_MS));
    this.ceiling = ceiling * 32767;
  }

  push(block: Int16Array): void {
    if (this.out.length < block.length) this.out = new Int16Array(block.length);
    const out = this.out;
    const ring = this.ring;
    const L = ring.length;
    const c = this.ceiling;
    const gain = this.gain;
    let n = 0;
    let i = 0;
    // Filling the delay line at the start.
    for (; i < block.length && this.filled < L; i++) {
      const x = block[i] * gain;
      if ((x < 0 ? -x : x) > c) this.peak(c / (x < 0 ? -x : x), L);
      ring[this.pos] = x;
      this.pos = (this.pos + 1) % L;
      this.filled++;
    }
    // Locals in the hot loop: this runs for every sample of every article. The envelope logic
    // is level() and peak() inlined.
    let pos = this.pos;
    let g = this.g;
    let step = this.step;
    let target = this.target;
    let hold = this.hold;
    const release = this.release;
    for (; i < block.length; i++) {
      const x = block[i] * gain;
      const a = x < 0 ? -x : x;
      if (a > c) {
        const r = c / a;
        const s = (r - g) / L;
        if (s < step) step = s;
        if (r < target) target = r;
        hold = L + 1;
      }
      const y = ring[pos];
      ring[pos] = x;
      pos = pos + 1 === L ? 0 : pos + 1;
      if (step < 0) {
        g += step;
        if (g <= target) {
          g = target;
          step = 0;
        }
      } else if (hold === 0 && g < 1) {
        g += (1 - g) * release;
        if (g > 0.9999) g = 1;
        target = g;
      }
      if (hold > 0) {
        hold--;
        if (hold === 0 && step === 0) target = 1;
      }
      // Clamped with Math.min/max, not `v = c`: the class fields start out undefined (ES2022
      // fields), so V8 keeps `c` as a tagged value, and assigning it to `v` made `v` a boxed
      // number, one heap allocation per sample. In the speech threads those scavenges promoted
      // each chunk's live buffers to the old generation (bench/README.md, "Audio worker memory").
      const v = Math.max(-c, Math.min(c, y * g));
      // Storing into an Int16Array truncates toward zero: half away from zero rounds.
      out[n++] = v < 0 ? v - 0.5 : v + 0.5;
    }
    this.pos = pos;
    this.g = g;
    this.step = step;
    this.target = target;
    this.hold = hold;
    if (n > 0) this.emit(out.subarray(0, n));
  }

  /** Emits the delayed samples still held. */
  finish(): void {
    const L = this.ring.length;
    const tail = new Int16Array(this.filled);
    const start = this.filled < L ? 0 : this.pos;
    for (let i = 0; i < tail.length; i++) tail[i] = this.level(this.ring[(start + i) % L], this.ceiling);
    this.filled = 0;
    if (tail.length) this.emit(tail);
  }

  /** A sample `L` ahead needs gain `r`: ramp down so the gain is at most r when it comes out. */
  private peak(r: number, L: number): void {
    const step = (r - this.g) / L;
    if (step < this.step) this.step = step;
    if (r < this.target) this.target = r;
    this.hold = L + 1;
  }

  private level(y: number, c: number): number {
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
    let v = y * this.g;
    if (v > c) v = c;
    else if (v < -c) v = -c;
    return Math.round(v);
  }
}
