// LAME 3.100 compiled to a standalone WebAssembly module (wasm/build.sh) with the C glue in
// wasm/lame-glue.c: constant-bitrate mono MP3 from 16-bit PCM, without ID3 or Xing/Info tags.
interface LameExports {
  memory: WebAssembly.Memory;
  _initialize(): void;
  malloc(bytes: number): number;
  free(ptr: number): void;
  enc_open(sampleRate: number, kbps: number, quality: number): number;
  enc_encode(encoder: number, pcm: number, samples: number, out: number, capacity: number): number;
  enc_flush(encoder: number, out: number, capacity: number): number;
  enc_close(encoder: number): void;
}

// Samples per encoder call, and the output room LAME asks for per call (1.25 x samples + 7200).
const BLOCK = 16384;
const OUT_CAPACITY = Math.ceil(1.25 * BLOCK) + 7200;
// The frames of a stream collect in one buffer per instance, reused by the next stream. A fresh
// buffer per stream, grown by doubling, left about 1 MB of dead ArrayBuffers per chunk in the
// worker thread; V8 frees those only when a thread's external memory passes its GC limit, so up
// to ~60 MB per thread piled up during a long article (bench/README.md, "Audio worker memory").
// Past KEEP_BYTES (about 5 minutes at 48 kbps) the buffer is let go after the stream, so one long
// text does not pin its size for the life of the thread.
const FIRST_BYTES = 256 * 1024;
const KEEP_BYTES = 2 * 1024 * 1024;

export interface Mp3Stream {
  /** Encodes samples (copied; the array may be reused once this returns). */
  write(samples: Int16Array): void;
  /** Flushes and returns all MP3 frames; the bytes own their ArrayBuffer. */
  end(): Uint8Array<ArrayBuffer>;
  /** Drops the stream without output. */
  close(): void;
}

export interface Lame {
  /** One encoder at a time per instance: a stream must end or close before the next opens (they share the buffers). */
  open(sampleRate: number, kbps: number, quality: number): Mp3Stream;
}

/** `compiled`: wasm/lame.wasm, compiled (see compileWasm). */
export function loadLame(compiled: WebAssembly.Module): Lame {
  let exports!: LameExports;
  const instance = new WebAssembly.Instance(compiled, {
    env: { emscripten_notify_memory_growth: () => {} },
    wasi_snapshot_preview1: {
      // LAME reports problems on stderr; the return codes tell us what we need, so output is dropped.
      fd_write: (_fd: number, iovs: number, count: number, written: number) => {
        const view = new DataView(exports.memory.buffer);
        let total = 0;
        for (let i = 0; i < count; i++) total += view.getUint32(iovs + i * 8 + 4, true);
        view.setUint32(written, total, true);
        return 0;
      },
      fd_close: () => 0,
      fd_seek: () => 70, // ESPIPE
      proc_exit: (code: number) => {
        throw new Error(`LAME exited with code ${code}`);
      },
    },
  });
  exports = instance.exports as unknown as LameExports;
  exports._initialize();
  const input = exports.malloc(BLOCK * 2);
  const output = exports.malloc(OUT_CAPACITY);
  if (!input || !output) throw new Error("LAME is out of memory");
  let mp3 = new Uint8Array(FIRST_BYTES);

  return {
    open(sampleRate, kbps, quality) {
      const encoder = exports.enc_open(sampleRate, kbps, quality);
      if (!encoder) throw new Error(`LAME rejected ${sampleRate} Hz at ${kbps} kbps`);
      let filled = 0;
      let size = 0;
      let open = true;
      const keep = (bytes: number) => {
        if (bytes < 0) throw new Error(`LAME failed to encode (${bytes})`);
        if (size + bytes > mp3.length) {
          const grown = new Uint8Array(Math.max(mp3.length * 2, size + bytes));
          grown.set(mp3.subarray(0, size));
          mp3 = grown;
        }
        mp3.set(new Uint8Array(exports.memory.buffer, output, bytes), size);
        size += bytes;
      };
      const encode = () => {
        if (filled === 0) return;
        keep(exports.enc_encode(encoder, input, filled, output, OUT_CAPACITY));
        filled = 0;
      };
      const close = () => {
        if (!open) return;
        open = false;
        exports.enc_close(encoder);
        if (mp3.length > KEEP_BYTES) mp3 = new Uint8Array(FIRST_BYTES);
      };
      return {
        write(samples) {
          for (let at = 0; at < samples.length; ) {
            const n = Math.min(BLOCK - filled, samples.length - at);
            // Memory may have grown since the last call: take a fresh view every time.
            new Int16Array(exports.memory.buffer, input + filled * 2, n).set(samples.subarray(at, at + n));
            filled += n;
            at += n;
            if (filled === BLOCK) encode();
          }
        },
        end() {
          try {
            encode();
            keep(exports.enc_flush(encoder, output, OUT_CAPACITY));
            return mp3.slice(0, size);
          } finally {
            close();
          }
        },
        close,
      };
    },
  };
}
