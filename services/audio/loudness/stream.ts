// An MP3 measured while it downloads: each piece of the body is decoded (mpg123) and metered as it
// comes in, so that when the last byte arrives only the last piece is left to do.
import { createHash } from "node:crypto";
import { MPEGDecoder } from "mpg123-decoder";
import { LoudnessMeter } from "./meter.js";

export interface Metered {
  /** The meter, finished; the caller holds its one reference. */
  meter: LoudnessMeter;
  /** SHA-1 of every byte pushed (base64): the measurement cache's key. */
  key: string;
  bytes: number;
}

let decoders = 0;

export class Mp3Meter {
  private decoder: MPEGDecoder | undefined;
  private ready: Promise<void> | undefined;
  private queued: Uint8Array[] = [];
  private meter: LoudnessMeter | undefined;
  private error: unknown;
  private closed = false;
  private ending = false;
  private readonly hash = createHash("sha1");
  private key: string | undefined;
  /** Bytes pushed so far. */
  bytes = 0;
  /** Whether decoding has begun: not when the whole body came before the decoder was ready. */
  started = false;

  /** Starts the decoder at the first byte: a chunk from the cache never streams and needs none. */
  private start(): void {
    // Each stream its own decoder (mpg123 keeps the bit reservoir and filter state between frames);
    // one is ~0.2 MB and a few ms to start, the compiled module is shared.
    const d = new MPEGDecoder();
    decoders++;
    this.ready = d.ready.then(
      () => {
        if (this.closed) return this.free(d);
        this.decoder = d;
        // Once the body is complete, end() decodes what waits (unless the cache knows it).
        if (!this.ending) this.drain();
      },
      (e) => {
        decoders--;
        this.error ??= e;
      },
    );
  }

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
    if (this.decoder) this.decode(bytes);
    else {
      this.queued.push(bytes);
      if (!this.ready) this.start();
    }
  };

  /** SHA-1 (base64) of every byte pushed: the measurement cache's key. No bytes may follow. */
  digest(): string {
    this.ending = true;
    this.key ??= this.hash.digest("base64");
    return this.key;
  }

  /** After the last byte: the finished meter, or the reason there is none (not MP3, no audio). */
  async end(): Promise<Metered> {
    const key = this.digest();
    await this.ready;
    if (this.closed) throw new Error("loudness: the stream was aborted");
    if (this.decoder) this.drain();
    this.close();
    const meter = this.meter;
    this.meter = undefined;
    if (this.error !== undefined) {
      meter?.release();
      throw this.error;
    }
    if (!meter) throw new Error("loudness: the MP3 decodes to no audio");
    return { meter: meter.finish(), key, bytes: this.bytes };
  }

  /** Drops the stream (the request failed): frees the decoder and the meter. */
  abort(): void {
    if (this.closed) return;
    this.close();
    this.meter?.release();
    this.meter = undefined;
  }

  private drain(): void {
    for (const bytes of this.queued.splice(0)) this.decode(bytes);
  }

  private decode(bytes: Uint8Array): void {
    this.started = true;
    try {
      const r = this.decoder!.decode(bytes);
      const n = r.samplesDecoded;
      if (n === 0) return;
      this.meter ??= new LoudnessMeter(r.sampleRate);
      if (r.sampleRate !== this.meter.sampleRate) throw new Error(`loudness: the sample rate changes from ${this.meter.sampleRate} to ${r.sampleRate} Hz`);
      const [a, b] = r.channelData;
      // The decoder gives two channels even for mono (both the same, so the mean is exact): the
      // file is measured as mono, as it is published.
      if (b) for (let i = 0; i < n; i++) a[i] = (a[i] + b[i]) / 2;
      this.meter.add(a.subarray(0, n));
    } catch (e) {
      this.error ??= e;
    }
  }

  private close(): void {
    this.closed = true;
    this.queued = [];
    if (this.decoder) this.free(this.decoder);
    this.decoder = undefined;
  }

  private free(d: MPEGDecoder): void {
    decoders--;
    d.free();
  }
}

/** For tests: decoders started and not yet freed. */
export function liveDecoders(): number {
  return decoders;
}
