// SVOX Pico (WASM, @echogarden/svoxpico-wasm) driven through its C API, for one worker thread:
// text in, 16 kHz 16-bit PCM out in blocks, as the `pico2wave` program does it.
import SvoxPico from "@echogarden/svoxpico-wasm";
import type { Lingware } from "./files.js";

export const PICO_RATE = 16000;

// Pico's working memory, as pico2wave gives it.
const MEMORY = 2_500_000;
// Bytes of PCM per pico_getData call; Pico hands out at most this much per step.
const OUT_BYTES = 2048;
// pico_putTextUtf8 takes a 16-bit count.
const TEXT_STEP = 16_000;
const PICO_OK = 0;
const STEP_IDLE = 200;
const STEP_BUSY = 201;
const RESET_FULL = 0;

interface PicoModule {
  FS: { writeFile(path: string, data: Uint8Array): void };
  HEAPU8: Uint8Array;
  getValue(ptr: number, type: "i16" | "i32"): number;
  _malloc(bytes: number): number;
  _free(ptr: number): void;
  _pico_initialize(memory: number, size: number, outSystem: number): number;
  _pico_loadResource(system: number, file: number, outResource: number): number;
  _pico_getResourceName(system: number, resource: number, outName: number): number;
  _pico_createVoiceDefinition(system: number, voice: number): number;
  _pico_addResourceToVoiceDefinition(system: number, voice: number, resource: number): number;
  _pico_newEngine(system: number, voice: number, outEngine: number): number;
  _pico_putTextUtf8(engine: number, text: number, size: number, outPut: number): number;
  _pico_getData(engine: number, out: number, size: number, outReceived: number, outType: number): number;
  _pico_resetEngine(engine: number, mode: number): number;
}

export interface PicoSynth {
  /** Speaks `text` (Pico markup allowed), handing each block of PCM to `emit`, which must copy what it keeps. */
  speak(text: string, emit: (samples: Int16Array) => void): void;
}

/** `compiled`: svoxpico.wasm, compiled once in the parent and shared by its threads. */
export async function loadPico(compiled: WebAssembly.Module, lingware: Pick<Lingware, "ta" | "sg">): Promise<PicoSynth> {
  const m = (await SvoxPico({
    // The module is given, so the package's loader never looks for its .wasm beside itself
    // (a worker thread runs a bundle from a data: URL, where that would fail).
    instantiateWasm(imports: WebAssembly.Imports, receive: (instance: WebAssembly.Instance, module: WebAssembly.Module) => void) {
      const instance = new WebAssembly.Instance(compiled, imports);
      receive(instance, compiled);
      return instance.exports;
    },
    print: () => {},
    printErr: () => {},
  })) as PicoModule;

  const cString = (s: string) => {
    const bytes = Buffer.from(`${s}\0`, "utf8");
    const ptr = m._malloc(bytes.length);
    m.HEAPU8.set(bytes, ptr);
    return ptr;
  };
  const check = (status: number, what: string) => {
    if (status !== PICO_OK) throw new Error(`Pico failed to ${what} (status ${status})`);
  };
  const out = m._malloc(8);
  const i32 = () => m.getValue(out, "i32");

  check(m._pico_initialize(m._malloc(MEMORY), MEMORY, out), "initialise");
  const system = i32();
  const voiceName = cString("article-audio");
  check(m._pico_createVoiceDefinition(system, voiceName), "define its voice");
  const nameBuffer = m._malloc(256);
  for (const [file, bytes] of [["/ta.bin", lingware.ta], ["/sg.bin", lingware.sg]] as const) {
    m.FS.writeFile(file, bytes);
    check(m._pico_loadResource(system, cString(file), out), `load ${file.slice(1)}`);
    check(m._pico_getResourceName(system, i32(), nameBuffer), "name a resource");
    check(m._pico_addResourceToVoiceDefinition(system, voiceName, nameBuffer), "add a resource to its voice");
  }
  check(m._pico_newEngine(system, voiceName, out), "start its engine");
  const engine = i32();

  const pcm = m._malloc(OUT_BYTES);
  const put = m._malloc(4);
  const received = m._malloc(4);
  const dataType = m._malloc(4);

  return {
    speak(text, emit) {
      // The terminating NUL makes Pico speak the last sentence instead of waiting for more text.
      const bytes = Buffer.from(`${text}\0`, "utf8");
      const ptr = m._malloc(bytes.length);
      m.HEAPU8.set(bytes, ptr);
      try {
        for (let at = 0; at < bytes.length; ) {
          check(m._pico_putTextUtf8(engine, ptr + at, Math.min(TEXT_STEP, bytes.length - at), put), "take text");
          at += m.getValue(put, "i16");
          let status: number;
          do {
            status = m._pico_getData(engine, pcm, OUT_BYTES, received, dataType);
            const n = m.getValue(received, "i16");
            // HEAPU8 may have been replaced by a memory growth: read it afresh each step.
            if (n > 0) emit(new Int16Array(m.HEAPU8.buffer, pcm, n >> 1));
          } while (status === STEP_BUSY);
          if (status !== STEP_IDLE) throw new Error(`Pico failed to speak (status ${status})`);
        }
      } catch (err) {
        m._pico_resetEngine(engine, RESET_FULL);
        throw err;
      } finally {
        m._free(ptr);
      }
    },
  };
}
