// eSpeak NG 1.51 compiled to WebAssembly (wasm/build.sh), driven through the C glue in
// wasm/espeak-glue.c: synchronous synthesis, 16-bit samples handed to a callback block by block.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import type { EspeakVoice } from "./voices.js";

/** The part of the Emscripten module (wasm/espeak-ng.cjs) used here. */
interface EspeakModule {
  HEAP16: Int16Array;
  HEAPU8: Uint8Array;
  FS: { mkdirTree(dir: string): void; writeFile(file: string, data: Uint8Array): void };
  _malloc(bytes: number): number;
  _free(ptr: number): void;
  _tts_init(dataDir: number, bufferMs: number): number;
  _tts_set_voice(name: number): number;
  _tts_set_param(parameter: number, value: number): number;
  _tts_speak(text: number, bytes: number): number;
  stringToUTF8(text: string, ptr: number, maxBytes: number): void;
  lengthBytesUTF8(text: string): number;
}

type ModuleFactory = (options: object) => Promise<EspeakModule>;

// espeak_PARAMETER values (speak_lib.h).
const RATE = 1;
const PITCH = 3;
// Block length eSpeak hands to the callback.
const BUFFER_MS = 100;
const DATA_DIR = "/espeak-ng-data";

export interface Espeak {
  readonly sampleRate: number;
  /**
   * Speaks `text` (plain text, UTF-8; no SSML, no phoneme input) with the voice. `onSamples` gets
   * each block as a view into WASM memory, valid during the call only; returning false stops.
   * Resolves to false when stopped.
   */
  speak(voice: EspeakVoice, text: string, onSamples: (block: Int16Array) => boolean): boolean;
}

/** `compiled`: wasm/espeak-ng.wasm, compiled (see compileWasm). */
export async function loadEspeak(assetsDir: string, compiled: WebAssembly.Module): Promise<Espeak> {
  const factory = createRequire(path.join(assetsDir, "espeak-ng.cjs"))("./espeak-ng.cjs") as ModuleFactory;
  let sink: ((ptr: number, count: number) => number) | undefined;
  const mod = await factory({
    instantiateWasm(imports: WebAssembly.Imports, receive: (instance: WebAssembly.Instance) => void) {
      const instance = new WebAssembly.Instance(compiled, imports);
      receive(instance);
      return instance.exports;
    },
    onSamples: (ptr: number, count: number) => (sink ? sink(ptr, count) : 0),
    print: () => {},
    printErr: () => {},
  });
  copyTree(mod, path.join(assetsDir, "espeak-ng-data"), DATA_DIR);

  const cString = (text: string): [number, number] => {
    const bytes = mod.lengthBytesUTF8(text);
    const ptr = mod._malloc(bytes + 1);
    if (!ptr) throw new Error("eSpeak is out of memory");
    mod.stringToUTF8(text, ptr, bytes + 1);
    return [ptr, bytes];
  };
  const withString = <T>(text: string, use: (ptr: number, bytes: number) => T): T => {
    const [ptr, bytes] = cString(text);
    try {
      return use(ptr, bytes);
    } finally {
      mod._free(ptr);
    }
  };

  const sampleRate = withString(DATA_DIR, (ptr) => mod._tts_init(ptr, BUFFER_MS));
  if (sampleRate <= 0) throw new Error(`eSpeak failed to initialise (${sampleRate})`);

  return {
    sampleRate,
    speak(voice, text, onSamples) {
      if (withString(voice.name, (ptr) => mod._tts_set_voice(ptr)) !== 0) throw new Error(`eSpeak has no voice '${voice.name}'`);
      mod._tts_set_param(RATE, voice.rate);
      mod._tts_set_param(PITCH, voice.pitch);
      let stopped = false;
      let failure: unknown;
      sink = (ptr, count) => {
        try {
          // HEAP16 is replaced when memory grows, so it is read anew for every block.
          if (onSamples(mod.HEAP16.subarray(ptr >> 1, (ptr >> 1) + count))) return 0;
          stopped = true;
        } catch (err) {
          // Thrown through WASM frames, an error would leave eSpeak mid-sentence; stop it cleanly instead.
          failure = err;
        }
        return 1;
      };
      let status: number;
      try {
        status = withString(text, (ptr, bytes) => mod._tts_speak(ptr, bytes));
      } finally {
        sink = undefined;
      }
      if (failure) throw failure;
      if (stopped) return false;
      if (status !== 0) throw new Error(`eSpeak synthesis failed (${status})`);
      return true;
    },
  };
}

/** Copies a directory of the real file system into the module's in-memory one. */
function copyTree(mod: EspeakModule, from: string, to: string): void {
  mod.FS.mkdirTree(to);
  for (const name of readdirSync(from)) {
    const source = path.join(from, name);
    if (statSync(source).isDirectory()) copyTree(mod, source, `${to}/${name}`);
    else mod.FS.writeFile(`${to}/${name}`, readFileSync(source));
  }
}
