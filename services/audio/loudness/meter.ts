// ITU-R BS.1770 / EBU R128 measurement with libebur128 1.2.6 (C, MIT), our own WebAssembly build
// of it: wasm/loudness.wasm, made by wasm/build.sh from the library's release, minimp3 (CC0, for
// MP3 streams: stream.ts) and our C layer in wasm/meter-shim.c. The module imports nothing; its
// memory holds every meter's and stream's state.
//
// A meter takes mono samples in pieces, so a chunk can be measured while it downloads. Finished
// meters keep only their 400 ms gating blocks (~35 bytes per 100 ms) and peaks, and the loudness
// of several played one after another is gated over all their blocks together
// (ebur128_loudness_global_multiple), as one pass over the joined audio would be, but for the
// blocks that would straddle two of them.
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

interface Exports {
  memory: WebAssembly.Memory;
  _initialize(): void;
  meter_alloc(bytes: number): number;
  meter_free(ptr: number): void;
  meter_new(rate: number): number;
  meter_add(st: number, samples: number, frames: number): number;
  meter_finish(st: number): number;
  meter_loudness(st: number): number;
  meter_loudness_multiple(sts: number, count: number): number;
  meter_true_peak(st: number): number;
  meter_destroy(st: number): void;
  meter_blocks(st: number): number;
  meter_export(st: number, out: number): void;
  meter_import(data: number, blocks: number): number;
  mp3_new(): number;
  mp3_reserve(s: number, bytes: number): number;
  mp3_push(s: number, bytes: number): number;
  mp3_end(s: number): number;
  mp3_sample_rate(s: number): number;
  mp3_samples(s: number): number;
  mp3_take_meter(s: number): number;
  mp3_destroy(s: number): void;
}

/**
 * The module file: beside this file's directory in the sources, and beside the compiled code when
 * copied there (the Docker image does), else in the source tree it was built from.
 */
function wasmFile(): string {
  const candidates = [new URL("./wasm/loudness.wasm", import.meta.url), new URL("../../../../services/audio/loudness/wasm/loudness.wasm", import.meta.url)];
  for (const url of candidates) {
    const file = fileURLToPath(url);
    if (existsSync(file)) return file;
  }
  throw new Error(`The loudness meter's WebAssembly module is missing (looked in ${fileURLToPath(candidates[0])})`);
}

// Samples are copied into the module through this many floats at a time.
const SCRATCH_FRAMES = 16384;

let wasm: { e: Exports; scratch: number } | undefined;

/** The module, instantiated at first use; for stream.ts, which feeds it MP3 bytes. */
export function load(): { e: Exports; scratch: number } {
  if (wasm) return wasm;
  const e = new WebAssembly.Instance(new WebAssembly.Module(readFileSync(wasmFile())), {}).exports as unknown as Exports;
  e._initialize();
  const scratch = e.meter_alloc(SCRATCH_FRAMES * 4);
  if (!scratch) throw new Error("loudness meter: out of memory");
  wasm = { e, scratch };
  return wasm;
}

export interface Measurement {
  /** Integrated loudness, LUFS (-Infinity when everything is below the absolute gate). */
  lufs: number;
  /** True peak, dBTP (-Infinity for digital silence). */
  truePeak: number;
  /** Seconds of audio measured. */
  seconds: number;
}

// toBytes: format, sample rate, frames, then the module's export (true peak, sample peak, blocks).
const FORMAT = 1;
const HEADER = 3;

const lufsOf = (v: number) => (Number.isFinite(v) && v > -70 ? v : -Infinity);
const dbOf = (linear: number) => (linear > 0 ? 20 * Math.log10(linear) : -Infinity);

let live = 0;

/**
 * One mono stream's meter: integrated loudness and true peak (4× oversampled below 96 kHz with
 * the library's interpolator). Reference counted: whoever holds one calls release() once done
 * with it; retain() gives another holder its own reference. The last release frees its WASM memory.
 */
export class LoudnessMeter {
  private ptr: number;
  private refs = 1;
  private frames = 0;
  private finished = false;

  /** `adopt`: a meter the module's MP3 stream filled (stream.ts), with the frames it took. */
  constructor(
    readonly sampleRate: number,
    adopt?: { ptr: number; frames: number },
  ) {
    const { e } = load();
    this.ptr = adopt ? adopt.ptr : e.meter_new(sampleRate);
    if (!this.ptr) throw new Error(`loudness meter: cannot measure at ${sampleRate} Hz`);
    this.frames = adopt?.frames ?? 0;
    live++;
  }

  get seconds(): number {
    return this.frames / this.sampleRate;
  }

  /** Adds the next samples (full scale ±1). */
  add(samples: Float32Array): void {
    const st = this.state();
    if (this.finished) throw new Error("loudness meter: add() after finish()");
    const { e, scratch } = load();
    for (let at = 0; at < samples.length; at += SCRATCH_FRAMES) {
      const piece = samples.subarray(at, at + SCRATCH_FRAMES);
      // A view made after every call: the memory may have grown (and its buffer changed) in the last.
      new Float32Array(e.memory.buffer, scratch, piece.length).set(piece);
      if (e.meter_add(st, scratch, piece.length) !== 0) throw new Error("loudness meter: out of memory");
    }
    this.frames += samples.length;
  }

  /** No more samples: drops what only adding needs (~270 KB at 24 kHz), keeps the figures. */
  finish(): this {
    if (!this.finished && load().e.meter_finish(this.state()) !== 0) throw new Error("loudness meter: out of memory");
    this.finished = true;
    return this;
  }

  measurement(): Measurement {
    const { e } = load();
    const st = this.state();
    return { lufs: lufsOf(e.meter_loudness(st)), truePeak: dbOf(e.meter_true_peak(st)), seconds: this.seconds };
  }

  /**
   * A finished meter's figures as bytes, to keep beside the audio it measured: what
   * LoudnessMeter.fromBytes needs to give the same loudness, alone or gated with others, and the
   * same true peak (~8 bytes per 100 ms of audio).
   */
  toBytes(): Buffer {
    if (!this.finished) throw new Error("loudness meter: toBytes() before finish()");
    const { e } = load();
    const st = this.state();
    const blocks = e.meter_blocks(st);
    const out = e.meter_alloc((blocks + 2) * 8);
    if (!out) throw new Error("loudness meter: out of memory");
    try {
      e.meter_export(st, out);
      const data = new Float64Array(HEADER + 2 + blocks);
      data.set([FORMAT, this.sampleRate, this.frames]);
      data.set(new Float64Array(e.memory.buffer, out, blocks + 2), HEADER);
      return Buffer.from(data.buffer);
    } finally {
      e.meter_free(out);
    }
  }

  /** A finished meter from toBytes(); throws on bytes that are not one. The caller holds its one reference. */
  static fromBytes(bytes: Uint8Array): LoudnessMeter {
    const n = bytes.length / 8;
    if (!Number.isInteger(n) || n < HEADER + 2) throw new Error("loudness meter: not a stored meter");
    const data = new Float64Array(n);
    new Uint8Array(data.buffer).set(bytes);
    const [format, rate, frames] = data;
    if (format !== FORMAT || !(rate > 0) || !(frames >= 0)) throw new Error("loudness meter: not a stored meter");
    const { e } = load();
    const at = e.meter_alloc((n - HEADER) * 8);
    if (!at) throw new Error("loudness meter: out of memory");
    try {
      new Float64Array(e.memory.buffer, at, n - HEADER).set(data.subarray(HEADER));
      const ptr = e.meter_import(at, n - HEADER - 2);
      if (!ptr) throw new Error("loudness meter: out of memory");
      const meter = new LoudnessMeter(rate, { ptr, frames });
      meter.finished = true;
      return meter;
    } finally {
      e.meter_free(at);
    }
  }

  retain(): this {
    this.state();
    this.refs++;
    return this;
  }

  release(): void {
    const st = this.state();
    if (--this.refs > 0) return;
    this.ptr = 0;
    live--;
    load().e.meter_destroy(st);
  }

  private state(): number {
    if (!this.ptr) throw new Error("loudness meter: used after its last release()");
    return this.ptr;
  }

  /**
   * Parts played one after another, as one programme: loudness gated over all their blocks
   * together, the highest true peak, the summed duration. An empty list is silence.
   */
  static together(meters: readonly LoudnessMeter[]): Measurement {
    const { e } = load();
    let truePeak = 0;
    let seconds = 0;
    for (const m of meters) {
      truePeak = Math.max(truePeak, e.meter_true_peak(m.state()));
      seconds += m.seconds;
    }
    if (meters.length === 0) return { lufs: -Infinity, truePeak: -Infinity, seconds: 0 };
    const list = e.meter_alloc(meters.length * 4);
    if (!list) throw new Error("loudness meter: out of memory");
    try {
      new Uint32Array(e.memory.buffer, list, meters.length).set(meters.map((m) => m.state()));
      return { lufs: lufsOf(e.meter_loudness_multiple(list, meters.length)), truePeak: dbOf(truePeak), seconds };
    } finally {
      e.meter_free(list);
    }
  }
}

/** Integrated loudness and true peak of mono samples (full scale ±1), in one piece. */
export function measure(samples: Float32Array, sampleRate: number): Measurement {
  const meter = new LoudnessMeter(sampleRate);
  try {
    meter.add(samples);
    return meter.measurement();
  } finally {
    meter.release();
  }
}

/** For tests: meters not yet released, and the module's memory (it grows, never shrinks). */
export function meterStats(): { live: number; memoryBytes: number } {
  return { live, memoryBytes: wasm ? wasm.e.memory.buffer.byteLength : 0 };
}
