// 5 ms ramps: short enough to be inaudible on speech, long enough that a part never starts or
// ends on a non-zero sample, which is what would click at a frame-level join.
const FADE_MS = 5;

// eSpeak ends a text with its own sentence-final pause (~260 ms) and starts with some silence.
// Every part gets the same edges instead, so that a join between two chunks sounds like the pause
// between two sentences inside one chunk (eSpeak's are ~200-330 ms): trail + lead + the codec's
// delay and padding (~25-50 ms) come to about 180 ms, at the short end so no join sounds like a stall.
export const LEAD_MS = 10;
export const TRAIL_MS = 120;
// Below about -50 dBFS counts as silence: eSpeak's pauses are digital zeros or very close to
// them, and the faint decay of a last sound is inaudible at a join anyway.
const SILENCE_FLOOR = 0.003;

/**
 * The same edges as shapeEdges, applied while eSpeak is still speaking: 16-bit blocks go in as
 * they come, shaped samples go out to `emit` (which must copy what it keeps) as soon as they are
 * known to lie inside the kept span. Only a silent stretch after the latest sound is held back,
 * to be dropped or cut to the trail at the end, so memory stays flat for any length of text.
 */
export class EdgeShaper {
  private readonly lead: number;
  private readonly trail: number;
  private readonly fade: number;
  private readonly floor = SILENCE_FLOOR * 32768;
  private started = false;
  // Before the first sound: the latest `lead` samples (a ring); after it: silence since the latest sound.
  private held: Int16Array;
  private heldLength = 0;
  private ringStart = 0;
  // Samples still to fade in at the start of the output.
  private fadeInDone = 0;

  constructor(sampleRate: number, private readonly emit: (samples: Int16Array) => void) {
    ({ lead: this.lead, trail: this.trail } = edges(sampleRate));
    this.fade = Math.floor((sampleRate * FADE_MS) / 1000);
    this.held = new Int16Array(Math.max(this.lead, 4096));
  }

  push(block: Int16Array): void {
    let from = 0;
    if (!this.started) {
      const first = this.firstLoud(block);
      if (first < 0) {
        this.remember(block);
        return;
      }
      this.started = true;
      // The lead: up to `lead` samples before the first sound, partly from earlier blocks.
      const fromBlock = Math.min(first, this.lead);
      const fromRing = Math.min(this.lead - fromBlock, this.heldLength);
      const leadIn = new Int16Array(fromRing + fromBlock);
      for (let i = 0; i < fromRing; i++) leadIn[i] = this.held[(this.ringStart + this.heldLength - fromRing + i) % this.lead];
      leadIn.set(block.subarray(first - fromBlock, first), fromRing);
      this.heldLength = 0;
      this.out(leadIn);
      from = first;
    }
    const rest = block.subarray(from);
    const last = this.lastLoud(rest);
    if (last < 0) {
      this.hold(rest);
      return;
    }
    if (this.heldLength > 0) {
      this.out(this.held.subarray(0, this.heldLength));
      this.heldLength = 0;
    }
    this.out(rest.subarray(0, last + 1));
    this.hold(rest.subarray(last + 1));
  }

  /** Emits the trail (held silence, then zeros), faded out; all silence when nothing was loud. */
  finish(): void {
    if (!this.started) {
      this.emit(new Int16Array(this.lead + this.trail));
      return;
    }
    const tail = new Int16Array(this.trail);
    tail.set(this.held.subarray(0, Math.min(this.heldLength, this.trail)));
    this.heldLength = 0;
    const n = Math.min(this.fade, tail.length);
    for (let i = 0; i < n; i++) tail[tail.length - 1 - i] = Math.round(tail[tail.length - 1 - i] * (i / n));
    this.out(tail);
  }

  private out(samples: Int16Array): void {
    if (samples.length === 0) return;
    if (this.fadeInDone < this.fade) {
      const copy = samples.slice();
      for (let i = 0; i < copy.length && this.fadeInDone < this.fade; i++, this.fadeInDone++) copy[i] = Math.round(copy[i] * (this.fadeInDone / this.fade));
      this.emit(copy);
    } else this.emit(samples);
  }

  private firstLoud(block: Int16Array): number {
    for (let i = 0; i < block.length; i++) if (Math.abs(block[i]) >= this.floor) return i;
    return -1;
  }

  private lastLoud(block: Int16Array): number {
    for (let i = block.length - 1; i >= 0; i--) if (Math.abs(block[i]) >= this.floor) return i;
    return -1;
  }

  /** Before the first sound: keeps the latest `lead` samples. */
  private remember(block: Int16Array): void {
    const keep = block.subarray(Math.max(0, block.length - this.lead));
    for (let i = 0; i < keep.length; i++) {
      if (this.heldLength < this.lead) this.held[(this.ringStart + this.heldLength++) % this.lead] = keep[i];
      else {
        this.held[this.ringStart] = keep[i];
        this.ringStart = (this.ringStart + 1) % this.lead;
      }
    }
  }

  /** After the first sound: silence that is emitted only if more sound follows. */
  private hold(samples: Int16Array): void {
    if (samples.length === 0) return;
    if (this.heldLength + samples.length > this.held.length) {
      const grown = new Int16Array(Math.max(this.held.length * 2, this.heldLength + samples.length));
      grown.set(this.held.subarray(0, this.heldLength));
      this.held = grown;
    }
    this.held.set(samples, this.heldLength);
    this.heldLength += samples.length;
  }
}

/** The edge treatment on a whole buffer of float samples: the definition EdgeShaper streams (and is tested against). */
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
