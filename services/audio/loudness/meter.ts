// ITU-R BS.1770 / EBU R128 measurement with the ebur128 Rust crate, as built to WebAssembly by
// the ebur128-wasm package. Its own glue expects a bundler to import the .wasm file, so we load
// the module ourselves; the four imports only serve its panic hook.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";

interface Exports {
  memory: WebAssembly.Memory;
  ebur128_integrated_mono(rate: number, ptr: number, len: number): number;
  ebur128_true_peak_mono(rate: number, ptr: number, len: number): number;
  __wbindgen_malloc(size: number, align?: number): number;
}

let exports: Exports | undefined;

function load(): Exports {
  if (exports) return exports;
  const file = createRequire(import.meta.url).resolve("ebur128-wasm/ebur128_wasm_bg.wasm");
  const module = new WebAssembly.Module(readFileSync(file));
  let memory: WebAssembly.Memory | undefined;
  const glue = {
    __wbg_new_693216e109162396: () => 0,
    __wbg_stack_0ddaca5d1abfb52f: (at: number) => {
      // An empty stack string (pointer 0, length 0): the panic still traps and throws in JS.
      if (memory) new Int32Array(memory.buffer, at, 2).fill(0);
    },
    __wbg_error_09919627ac0992f5: () => undefined,
    __wbindgen_object_drop_ref: () => undefined,
  };
  const instance = new WebAssembly.Instance(module, { "./ebur128_wasm_bg.js": glue });
  exports = instance.exports as unknown as Exports;
  memory = exports.memory;
  return exports;
}

/** Copies samples into the module's memory; the callee takes ownership and frees them. */
function pass(e: Exports, samples: Float32Array): number {
  const ptr = e.__wbindgen_malloc(samples.length * 4, 4);
  new Float32Array(e.memory.buffer, ptr, samples.length).set(samples);
  return ptr;
}

export interface Measurement {
  /** Integrated loudness, LUFS (-Infinity when everything is below the absolute gate). */
  lufs: number;
  /** True peak, dBTP (-Infinity for digital silence). */
  truePeak: number;
  /** Seconds of audio measured. */
  seconds: number;
}

/** Integrated loudness and true peak of mono samples (full scale ±1). */
export function measure(samples: Float32Array, sampleRate: number): Measurement {
  const seconds = samples.length / sampleRate;
  if (samples.length === 0) return { lufs: -Infinity, truePeak: -Infinity, seconds };
  const e = load();
  const lufs = e.ebur128_integrated_mono(sampleRate, pass(e, samples), samples.length);
  // Already in dB (dBTP) as the crate's binding returns it.
  const truePeak = e.ebur128_true_peak_mono(sampleRate, pass(e, samples), samples.length);
  return { lufs: Number.isFinite(lufs) && lufs > -70 ? lufs : -Infinity, truePeak: Number.isFinite(truePeak) ? truePeak : -Infinity, seconds };
}
