// An MP3 measured while it downloads: the bytes go into the loudness module (wasm/meter-shim.c),
// which decodes them with minimp3 and meters the samples where they are, so no sample is copied
// into JavaScript or left for the garbage collector. When the last byte arrives only the last
// piece is left to do.
import { createHash } from "node:crypto";
import { load, LoudnessMeter } from "./meter.js";

export interface Metered {
  /** The meter, finished; the caller holds its one reference. */
  meter: LoudnessMeter;
  /** SHA-256 of every byte pushed (hex): the measurement cache's key. */
  key: string;
  bytes: number;
}

const ERRORS: Record<number, string> = {
  1: "loudness: out of memory while decoding",
  2: "loudness: the sample rate changes within the stream",
};

let streams = 0;

export class Mp3Meter {
  /** The module's stream state, from the first decoded piece until end() or abort(). */
  private ptr = 0;
  private queued: Uint8Array[] = [];
  private scheduled: NodeJS.Immediate | undefined;
  private error: unknown;
  private closed = false;
  private ending = false;
  private readonly hash = createHash("sha256");
  private key: string | undefined;
  /** Bytes pushed so far. */
  bytes = 0;
  /**
   * Whether decoding has begun. Pieces wait for the next turn of the event loop, so a body that
   * arrives whole and ends at once is not decoded before the measurement cache is asked.
   */
  started = false;

  /** The next bytes of the file. Never throws: a failure is reported by end(). */
  readonly push = (bytes: Uint8Array): void => {
    if (this.closed) return;
    if (this.ending) {
      this.error ??= new Error("loudness: bytes pushed after the end of the stream");
      return;
    }
    this.bytes += bytes.length;
    this.hash.update(bytes);
    if (this.error !== undefined) return;
    this.queued.push(bytes);
    this.scheduled ??= setImmediate(() => {
      this.scheduled = undefined;
      this.drain();
    });
  };

  /** SHA-256 (hex) of every byte pushed: the measurement cache's key. No bytes may follow. */
  digest(): string {
    this.ending = true;
    this.key ??= this.hash.digest("hex");
    return this.key;
  }

  /** After the last byte: the finished meter, or the reason there is none (not MP3, no audio). */
  async end(): Promise<Metered> {
    const key = this.digest();
    if (this.closed) throw new Error("loudness: the stream was aborted");
    this.drain();
    let meter: LoudnessMeter | undefined;
    if (this.ptr && this.error === undefined) {
      const { e } = load();
      const code = e.mp3_end(this.ptr);
      if (code) this.error = new Error(ERRORS[code] ?? `loudness: decoding failed (${code})`);
      else {
        const rate = e.mp3_sample_rate(this.ptr);
        const frames = e.mp3_samples(this.ptr);
        const ptr = e.mp3_take_meter(this.ptr);
        this.ptr = 0;
        streams--;
        if (ptr) meter = new LoudnessMeter(rate, { ptr, frames });
      }
    }
    this.close();
    if (this.error !== undefined) {
      meter?.release();
      throw this.error;
    }
    if (!meter) throw new Error("loudness: the MP3 decodes to no audio");
    return { meter: meter.finish(), key, bytes: this.bytes };
  }

  /** Drops the stream (the request failed): frees the decoder and the meter. */
  abort(): void {
    this.close();
  }

  private drain(): void {
    if (this.closed || this.error !== undefined) return;
    const { e } = load();
    for (const bytes of this.queued.splice(0)) {
      if (!this.ptr) {
        this.ptr = e.mp3_new();
        if (!this.ptr) {
          this.error = new Error(ERRORS[1]);
          return;
        }
        streams++;
      }
      this.started = true;
      const at = e.mp3_reserve(this.ptr, bytes.length);
      if (!at) {
        this.error = new Error(ERRORS[1]);
        return;
      }
      // A view made after every call: the memory may have grown (and its buffer changed).
      new Uint8Array(e.memory.buffer, at, bytes.length).set(bytes);
      const code = e.mp3_push(this.ptr, bytes.length);
      if (code) {
        this.error = new Error(ERRORS[code] ?? `loudness: decoding failed (${code})`);
        return;
      }
    }
  }

  private close(): void {
    this.closed = true;
    this.queued = [];
    if (this.scheduled) clearImmediate(this.scheduled);
    this.scheduled = undefined;
    if (this.ptr) {
      load().e.mp3_destroy(this.ptr);
      this.ptr = 0;
      streams--;
    }
  }
}

/** For tests: streams whose decoder holds module memory. */
export function liveDecoders(): number {
  return streams;
}
