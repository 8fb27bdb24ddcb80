// Gain and a look-ahead true-peak limiter on streamed 16-bit PCM, applied before encoding so that
// the output reaches the loudness target without its true peak passing the ceiling.

/** Samples the gain starts falling before a peak: the attack is a ramp this long, so it never clicks. */
const LOOKAHEAD_MS = 3;
/** Time constant of the recovery after a peak; long enough not to pump on speech. */
const RELEASE_MS = 60;
/** How often the makeup gain is revised, and over how long a past it looks. */
const MAKEUP_WINDOW_MS = 50;
const MAKEUP_MEMORY_MS = 2000;
/** At most +6 dB: a target that needs more is beyond what limiting speech can give. */
const MAX_MAKEUP = 2;
/**
 * How far under the true-peak ceiling the PCM ceiling sits: encoding to MP3 at our bitrates raises
 * true peaks by up to about a dB over the PCM's. The local engine relies on it (every voice at
 * -16 LUFS under -1.5 dBTP, where limiting is heavy, stayed 0.4 dB under); limitAndEncode starts
 * from it and measures.
 */
export const ENCODER_PEAK_MARGIN_DB = 1.2;

// Peaks between samples: eSpeak's bright output at 22,050 Hz peaks up to 3.5 dB above its samples,
// which a limiter that looks at samples only lets through. Each gap is interpolated at the three
// points a 4x-oversampling true-peak meter adds (windowed sinc over 8 samples), so a peak is
// found up to 4 samples after it entered.
const TAPS = 8;
const DETECT_DELAY = TAPS / 2;
/**
 * A gap is interpolated only next to a sample within 4.4 dB of the ceiling: the most a gap of
 * our voices' speech rises over both its samples is 3.5 dB (alloy; the others stay under 1.2 dB).
 * (The exact bound sum(|taps|) x the largest of the 8 samples clears no more: the filters' sums
 * of absolute taps are 1.45-1.60, so it holds only up to 0.63 of the ceiling.)
 */
const GAP_GATE = 0.6;
/**
 * The gate is applied as each sample enters, by bits in an integer shifted once per sample: a
 * sample over it marks the two steps, DETECT_DELAY - 1 and DETECT_DELAY later, at which it is the
 * gap's right-hand and then left-hand sample. Rereading the two samples from the ring instead, a
 * few stores after writing them, took about half of the limiter's time on speech.
 */
const GATE_BITS = 3 << (DETECT_DELAY - 1);
/** The filter for the point `f` of the way across the gap, normalised to unity gain. */
function gapFilter(f: number): number[] {
  const h = Array.from({ length: TAPS }, (_, j) => {
    const u = DETECT_DELAY - 1 + f - j;
    return (Math.sin(Math.PI * u) / (Math.PI * u)) * (0.5 + 0.5 * Math.cos((Math.PI * u) / DETECT_DELAY));
  });
  const sum = h.reduce((a, b) => a + b, 0);
  return h.map((x) => x / sum);
}
// peakAt() has them written out (TAPS = 8): at 1/4, 1/2 and 3/4 of the way.
const [Q0, Q1, Q2, Q3, Q4, Q5, Q6, Q7] = gapFilter(0.25);
const [H0, H1, H2, H3, H4, H5, H6, H7] = gapFilter(0.5);
const [T0, T1, T2, T3, T4, T5, T6, T7] = gapFilter(0.75);

/**
 * Multiplies by `gain`, and where that would take a sample, or the signal between two samples,
 * over `ceiling` (linear, full scale 1) lowers the gain in a linear ramp so the peak lands on
 * the ceiling, then recovers exponentially. Output is delayed by the look-ahead; finish() drains
 * it, so exactly as many samples come out as went in. `emit` must copy what it keeps.
 *
 * Limiting takes energy off the peaks, so the output would fall short of the loudness `gain` was
 * chosen for (by 1-2 LU for speech 14 dB under the ceiling). A makeup gain before the limiter
 * closes the gap: over the last seconds, the energy that left the limiter against what entered.
 */
export class Leveler {
  /** The look-ahead, a ring: slot `pos` holds the oldest sample, the next to leave. */
  private readonly ring: Float32Array;
  private readonly length: number;
  private pos = 0;
  private filled = 0;
  private readonly release: number;
  private readonly ceiling: number;
  private g = 1;
  private step = 0;
  private target = 1;
  /** Input samples still to come out before the latest detected peak has passed. */
  private hold = 0;
  /** Bit k: the gap k steps from now has a sample over the gate (see GATE_BITS). */
  private due = 0;
  private out: Int16Array = new Int16Array(0);
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
    if (!(gain > 0) || !(ceiling > 0)) throw new RangeError("Leveler: gain and ceiling must be positive");
    this.length = Math.max(2 * TAPS, Math.round((sampleRate * LOOKAHEAD_MS) / 1000));
    this.ring = new Float32Array(this.length);
    this.release = 1 - Math.exp(-1000 / (sampleRate * RELEASE_MS));
    this.ceiling = ceiling * 32767;
    this.window = this.windowLeft = Math.max(1, Math.round((sampleRate * MAKEUP_WINDOW_MS) / 1000));
    this.memory = Math.exp(-MAKEUP_WINDOW_MS / MAKEUP_MEMORY_MS);
  }

  push(block: Int16Array): void {
    if (this.out.length < block.length) this.out = new Int16Array(block.length);
    const n = this.run(block);
    if (n > 0) this.emit(this.out.subarray(0, n));
  }

  /**
   * Takes the block through, into this.out; returns how many samples came out. Apart from push():
   * each chunk's leveler has its own `emit`, and V8 had this loop's optimised code bail out at
   * the call to a new one again and again (0.2 ms each, ~200 times over 80 one-minute chunks).
   */
  private run(block: Int16Array): number {
    const out = this.out;
    const ring = this.ring;
    const L = this.length;
    // The sample checked is DETECT_DELAY old: it leaves the ring that much sooner.
    const ahead = L - DETECT_DELAY;
    const c = this.ceiling;
    const gate = c * GAP_GATE;
    let gain = this.gain * this.makeup;
    let due = this.due;
    let n = 0;
    let i = 0;
    // Filling the delay line at the start: every step checked.
    for (; i < block.length && this.filled < L; i++) {
      const x = Math.fround(block[i] * gain);
      ring[this.pos] = x;
      if (Math.abs(x) > gate) due |= GATE_BITS;
      due >>>= 1;
      this.pos = (this.pos + 1) % L;
      this.filled++;
      const a = this.peakAt(this.pos);
      if (a > c) this.peak(c / a, ahead);
    }
    // Locals in the hot loop: this runs for every sample of every article. The envelope logic
    // is level() and peak() inlined.
    let pos = this.pos;
    let g = this.g;
    let step = this.step;
    let target = this.target;
    let hold = this.hold;
    const release = this.release;
    let windowLeft = this.windowLeft;
    let windowIn = this.windowIn;
    let windowOut = this.windowOut;
    while (i < block.length) {
      // Up to the end of the block or of the makeup window, whichever comes first.
      const end = Math.min(block.length, i + windowLeft);
      windowLeft -= end - i;
      while (i < end) {
        if (due === 0 && step === 0 && hold === 0 && g === 1) {
          // Idle: gain 1, nothing held or ramping, no gap due for a look, as most of speech is.
          // A sample then only passes through the ring: every sample leaving it has been
          // checked, and one over the ceiling would still be held, so it leaves as it is (the
          // clamp of the full loop would do nothing to it).
          while (i < end) {
            const y = ring[pos];
            const x = Math.fround(block[i++] * gain);
            ring[pos] = x;
            pos = pos + 1 === L ? 0 : pos + 1;
            const up = y + 0.5;
            const rounded = Math.floor(up);
            out[n++] = rounded - (rounded === up && y < 0 ? 1 : 0);
            const yy = y * y;
            windowIn += yy;
            windowOut += yy;
            // Its gap is due for a look DETECT_DELAY - 1 samples on: the full loop takes over.
            if (Math.abs(x) > gate) {
              due = GATE_BITS >>> 1;
              break;
            }
          }
          continue;
        }
        if (due === 0 && step === 0 && hold === 0) {
          // Recovering (g < 1) after a peak has passed, as much of some voices' speech is: only
          // the release to follow. As when idle, nothing leaving can pass the ceiling any more.
          while (i < end) {
            const y = ring[pos];
            const x = Math.fround(block[i++] * gain);
            ring[pos] = x;
            pos = pos + 1 === L ? 0 : pos + 1;
            g += (1 - g) * release;
            if (g > 0.9999) g = 1;
            const v = y * g;
            const up = v + 0.5;
            const rounded = Math.floor(up);
            out[n++] = rounded - (rounded === up && v < 0 ? 1 : 0);
            windowIn += y * y;
            windowOut += v * v;
            if (Math.abs(x) > gate) {
              due = GATE_BITS >>> 1;
              break;
            }
            if (g === 1) break;
          }
          target = g;
          continue;
        }
        do {
          const y = ring[pos];
          // As the ring will hold it: the gate compares what the gap filters will read.
          const x = Math.fround(block[i++] * gain);
          ring[pos] = x;
          pos = pos + 1 === L ? 0 : pos + 1;
          if (Math.abs(x) > gate) due |= GATE_BITS;
          // The sample DETECT_DELAY before the newest or the one after it is over the gate: look
          // at it and the gap between them. Under the gate, neither can reach the ceiling.
          if ((due & 1) !== 0) {
            const a = this.peakAt(pos);
            if (a > c) {
              const r = c / a;
              const s = (r - g) / ahead;
              if (s < step) step = s;
              if (r < target) target = r;
              hold = ahead + 1;
            }
          }
          due >>>= 1;
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
          // number, one heap allocation per sample. In the speech threads those scavenges
          // promoted each chunk's live buffers to the old generation (bench/README.md, "Audio
          // worker memory").
          const v = Math.max(-c, Math.min(c, y * g));
          // Half away from zero. Storing into an Int16Array truncates toward zero, and a test on
          // v's sign would be a branch mispredicted at random on speech: floor(v + 0.5), less one
          // at the negative ties (rare, so that branch is predicted).
          const up = v + 0.5;
          const rounded = Math.floor(up);
          out[n++] = rounded - (rounded === up && v < 0 ? 1 : 0);
          windowIn += y * y;
          windowOut += v * v;
          // Until the peaks have passed: then the release (or nothing) is left, in the loops above.
        } while (i < end && !(due === 0 && step === 0 && hold === 0));
      }
      if (windowLeft === 0) {
        gain = this.gain * this.reviseMakeup(windowIn, windowOut);
        windowLeft = this.window;
        windowIn = windowOut = 0;
      }
    }
    this.pos = pos;
    this.g = g;
    this.step = step;
    this.target = target;
    this.hold = hold;
    this.due = due;
    this.windowLeft = windowLeft;
    this.windowIn = windowIn;
    this.windowOut = windowOut;
    return n;
  }

  /**
   * Emits the delayed samples still held. The last DETECT_DELAY samples were never checked between
   * samples (only clipped to the ceiling): a chunk ends in silence.
   */
  finish(): void {
    const L = this.length;
    const tail = new Int16Array(this.filled);
    const start = this.filled < L ? 0 : this.pos;
    for (let i = 0; i < tail.length; i++) tail[i] = this.level(this.ring[(start + i) % L], this.ceiling);
    this.filled = 0;
    if (tail.length) this.emit(tail);
  }

  /**
   * The highest absolute value at the sample DETECT_DELAY before the newest (ring slot `next` is
   * the one after the newest) and in the gap after it. Before the ring has filled, the slots not
   * yet written read as silence. The filters written out, each summed left to right as a loop
   * would: the three sums can run side by side, and the 8 samples are read once.
   */
  private peakAt(next: number): number {
    const ring = this.ring;
    const L = this.length;
    let j = next - TAPS;
    if (j < 0) j += L;
    const x0 = ring[j];
    j = j + 1 === L ? 0 : j + 1;
    const x1 = ring[j];
    j = j + 1 === L ? 0 : j + 1;
    const x2 = ring[j];
    j = j + 1 === L ? 0 : j + 1;
    const x3 = ring[j];
    j = j + 1 === L ? 0 : j + 1;
    const x4 = ring[j];
    j = j + 1 === L ? 0 : j + 1;
    const x5 = ring[j];
    j = j + 1 === L ? 0 : j + 1;
    const x6 = ring[j];
    j = j + 1 === L ? 0 : j + 1;
    const x7 = ring[j];
    const quarter = Q0 * x0 + Q1 * x1 + Q2 * x2 + Q3 * x3 + Q4 * x4 + Q5 * x5 + Q6 * x6 + Q7 * x7;
    const half = H0 * x0 + H1 * x1 + H2 * x2 + H3 * x3 + H4 * x4 + H5 * x5 + H6 * x6 + H7 * x7;
    const three = T0 * x0 + T1 * x1 + T2 * x2 + T3 * x3 + T4 * x4 + T5 * x5 + T6 * x6 + T7 * x7;
    // x3 is the sample checked, DETECT_DELAY before the newest.
    return Math.max(Math.abs(x3), Math.abs(quarter), Math.abs(half), Math.abs(three));
  }

  /** Energy in and out of the limiter over the last window → the makeup gain from now on. */
  private reviseMakeup(windowIn: number, windowOut: number): number {
    this.energyIn = this.energyIn * this.memory + windowIn;
    this.energyOut = this.energyOut * this.memory + windowOut;
    // What entered carries the current makeup: the makeup that would bring what leaves back to
    // what the plain gain gives is the square root of the ratio.
    if (this.energyOut > 0) this.makeup = Math.min(MAX_MAKEUP, Math.sqrt(this.energyIn / this.energyOut));
    return this.makeup;
  }

  /** A sample `ahead` of the output needs gain `r`: ramp down so the gain is at most r when it comes out. */
  private peak(r: number, ahead: number): void {
    const step = (r - this.g) / ahead;
    if (step < this.step) this.step = step;
    if (r < this.target) this.target = r;
    this.hold = ahead + 1;
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
