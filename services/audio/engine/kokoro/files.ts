// Where the Kokoro files are (KOKORO_DIR, default .voices/kokoro in the repository, filled by
// scripts/install-voices.mjs) and whether they are all there: what files.json lists.
import { existsSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

interface Manifest {
  model: { file: string; bytes: number; sha256: string };
  config: { file: string; bytes: number; sha256: string };
  voices: { dir: string; bytes: number; sha256: Record<string, string> };
}

/** files.json, read from beside this file in the sources or from the source tree compiled output came from. */
function manifest(): Manifest {
  const candidates = [new URL("./files.json", import.meta.url), new URL("../../../../../services/audio/engine/kokoro/files.json", import.meta.url)];
  for (const url of candidates) if (existsSync(url)) return JSON.parse(readFileSync(url, "utf8")) as Manifest;
  throw new Error(`Kokoro's file list is missing (looked in ${fileURLToPath(candidates[0])})`);
}

/** The repository's .voices/kokoro: from the sources, or from compiled output (dist/) beside them. */
export function defaultKokoroDir(): string {
  const fromSources = fileURLToPath(new URL("../../../../.voices/kokoro", import.meta.url));
  const fromDist = fileURLToPath(new URL("../../../../../.voices/kokoro", import.meta.url));
  return import.meta.url.endsWith(".ts") || !existsSync(fromDist) ? fromSources : fromDist;
}

export interface KokoroFiles {
  dir: string;
  model: string;
  config: string;
  voices: string;
  /** The voice names whose style files are there. */
  voiceNames: string[];
}

/** The files in `dir`; throws naming what is missing or cut short (the install script checked their hashes). */
export function kokoroFiles(dir: string): KokoroFiles {
  const m = manifest();
  const files = { dir, model: path.join(dir, m.model.file), config: path.join(dir, m.config.file), voices: path.join(dir, m.voices.dir) };
  const size = (file: string) => (existsSync(file) ? statSync(file).size : -1);
  const problems: string[] = [];
  if (size(files.model) !== m.model.bytes) problems.push(size(files.model) < 0 ? `${m.model.file} missing` : `${m.model.file} has ${size(files.model)} bytes, not ${m.model.bytes}`);
  if (size(files.config) !== m.config.bytes) problems.push(`${m.config.file} ${size(files.config) < 0 ? "missing" : "is not the expected file"}`);
  const voiceNames = Object.keys(m.voices.sha256).filter((name) => size(path.join(files.voices, `${name}.bin`)) === m.voices.bytes);
  if (voiceNames.length === 0) problems.push("no voice files");
  if (problems.length) throw new Error(`Kokoro's files in ${dir}: ${problems.join(", ")}`);
  return { ...files, voiceNames };
}
