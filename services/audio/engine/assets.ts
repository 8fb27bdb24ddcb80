import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { WasmModules } from "./protocol.js";

/**
 * Directory of the WASM engine's files (wasm/: eSpeak NG, LAME, voice data). They sit beside the
 * sources; compiled output (dist/) finds them beside itself when copied there (the Docker image
 * does), else in the source tree it was built from.
 */
export function wasmAssetsDir(): string {
  const candidates = [new URL("./wasm/", import.meta.url), new URL("../../../../services/audio/engine/wasm/", import.meta.url)];
  for (const url of candidates) {
    const dir = fileURLToPath(url);
    if (existsSync(`${dir}espeak-ng.wasm`) && existsSync(`${dir}lame.wasm`)) return dir;
  }
  throw new Error(`The WASM speech engine's files are missing (looked in ${fileURLToPath(candidates[0])})`);
}

let compiled: WasmModules | undefined;

/**
 * eSpeak NG and LAME, compiled once per process. Worker threads receive the same Module objects,
 * so V8 compiles (and optimises) their code once for all threads instead of once per thread.
 */
export function compileWasm(dir = wasmAssetsDir()): WasmModules {
  compiled ??= {
    espeak: new WebAssembly.Module(readFileSync(path.join(dir, "espeak-ng.wasm"))),
    lame: new WebAssembly.Module(readFileSync(path.join(dir, "lame.wasm"))),
  };
  return compiled;
}
