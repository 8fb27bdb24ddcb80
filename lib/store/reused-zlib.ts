// Raw deflate and inflate of the store's packed fields through one zlib stream
// each, reset and reused for every call. node:zlib's *Sync functions make a
// stream per call (a native handle with its state, an EventEmitter, an async
// resource) and close it again: for the ~1 KB texts of an archive that set-up,
// and the garbage and native memory it leaves to the collector, cost more than
// the inflate itself (bench/README.md, "Issue 33"). A GET by id inflates one
// text and a create deflates one.
//
// Reusing a stream takes the handle API that zlib's own synchronous path uses
// (`_handle.writeSync`, `_handle.reset`, `_writeState`: Node.js 12 to 24). If a
// runtime lacks it, or a call fails in any way, the call is made again with the
// public function, which then gives the answer or the error it always gave.
// The bytes are zlib's either way: what was stored before reads as it did.
import zlib from "node:zlib";

interface Handle {
  writeSync(flush: number, input: Uint8Array, inOff: number, inLen: number, out: Uint8Array, outOff: number, outLen: number): void;
  reset(): void;
}
type Stream = zlib.InflateRaw | zlib.DeflateRaw;
/** Node.js internals of a zlib stream: its native handle and where a write reports the space left. */
type Internals = { _handle?: Handle | null; _writeState?: Uint32Array };

/** Output kept for the next call up to this size; a larger one is let go after its call. */
const KEEP_OUT_BYTES = 256 * 1024;

export interface ReusedZlib {
  /** The whole output for `input`, in a buffer of its own. */
  buffer(input: Uint8Array): Buffer;
  /** The whole output for `input` as UTF-8 text (no buffer of its own is made). */
  text(input: Uint8Array): string;
}

function reused(make: () => Stream, once: (input: Uint8Array) => Buffer): ReusedZlib {
  let stream: Stream | undefined;
  let out = Buffer.allocUnsafe(16 * 1024);
  let usable = true;

  /** The handle of a live stream, made when there is none (a failed call closes its stream). */
  function handle(): { h: Handle; state: Uint32Array } | undefined {
    if (!usable) return undefined;
    let s = stream as (Stream & Internals) | undefined;
    if (!s || s.destroyed || !s._handle) {
      s = make() as Stream & Internals;
      // A failed write destroys the stream, which then emits its error: heard here, answered by `once`.
      s.on("error", () => {});
      stream = s;
    }
    const h = s._handle;
    const state = s._writeState;
    if (!h || typeof h.writeSync !== "function" || typeof h.reset !== "function" || !(state instanceof Uint32Array)) {
      usable = false;
      return undefined;
    }
    return { h, state };
  }

  /** Output bytes written to `out`, or -1 when the stream cannot give them. */
  function run(input: Uint8Array): number {
    const got = handle();
    if (!got) return -1;
    const { h, state } = got;
    try {
      h.reset();
      let inOff = 0;
      let total = 0;
      for (;;) {
        h.writeSync(zlib.constants.Z_FINISH, input, inOff, input.length - inOff, out, total, out.length - total);
        if (stream!.destroyed) return -1;
        const outLeft = state[0];
        const inLeft = state[1];
        total = out.length - outLeft;
        // Space left over: the stream ended. None left: more output may follow.
        if (outLeft !== 0) return total;
        inOff = input.length - inLeft;
        const bigger = Buffer.allocUnsafe(out.length * 2);
        out.copy(bigger, 0, 0, total);
        out = bigger;
      }
    } catch {
      return -1;
    }
  }

  const shrink = () => {
    if (out.length > KEEP_OUT_BYTES) out = Buffer.allocUnsafe(16 * 1024);
  };

  return {
    buffer(input) {
      const n = run(input);
      if (n < 0) return once(input);
      const copy = Buffer.allocUnsafe(n);
      out.copy(copy, 0, 0, n);
      shrink();
      return copy;
    },
    text(input) {
      const n = run(input);
      if (n < 0) return once(input).toString("utf8");
      const s = out.toString("utf8", 0, n);
      shrink();
      return s;
    },
  };
}

/** Raw inflate with a reused stream of these options (zlib.inflateRawSync's). */
export function reusedInflateRaw(opts: zlib.ZlibOptions): ReusedZlib {
  return reused(
    () => zlib.createInflateRaw(opts),
    (input) => zlib.inflateRawSync(input, opts),
  );
}

/** Raw deflate with a reused stream of these options (zlib.deflateRawSync's). */
export function reusedDeflateRaw(opts: zlib.ZlibOptions): ReusedZlib {
  return reused(
    () => zlib.createDeflateRaw(opts),
    (input) => zlib.deflateRawSync(input, opts),
  );
}
