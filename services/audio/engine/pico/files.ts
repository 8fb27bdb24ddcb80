// Where Pico's language files are, and whether they are the ones we pinned. They are not in git:
// `npm ci` installs them (scripts/install-pico.mjs) beside the engine's npm package, an operator
// without network copies them into PICO_DIR, and a Debian host with libttspico-data has them in
// /usr/share/pico/lang. Every file is checked against its sha256 before Pico reads it, so a
// truncated copy or another version is refused at start-up rather than heard as noise.
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import lingware from "./lingware.json" with { type: "json" };

export type PicoLang = "de-DE" | "en-US" | "en-GB";

/** The two files Pico needs for a language: text analysis (ta) and signal generation (sg). */
const FILES: Record<PicoLang, { ta: string; sg: string }> = {
  "de-DE": { ta: "de-DE_ta.bin", sg: "de-DE_gl0_sg.bin" },
  "en-US": { ta: "en-US_ta.bin", sg: "en-US_lh0_sg.bin" },
  "en-GB": { ta: "en-GB_ta.bin", sg: "en-GB_kh0_sg.bin" },
};

const PINNED: Record<string, { bytes: number; sha256: string }> = lingware.files;

export interface Lingware {
  dir: string;
  ta: Uint8Array;
  sg: Uint8Array;
}

/** Where `npm ci` puts the files: node_modules/.article-audio/pico, next to the engine's package. */
export function installedPicoDir(): string {
  const pkg = createRequire(import.meta.url).resolve("@echogarden/svoxpico-wasm/package.json");
  return path.join(path.dirname(pkg), "..", "..", ".article-audio", "pico");
}

/** The directories looked in, first match wins: PICO_DIR, the installed copy, Debian's. */
export function picoDirs(env: NodeJS.ProcessEnv = process.env): string[] {
  const dirs: string[] = [];
  if (env.PICO_DIR) dirs.push(path.resolve(env.PICO_DIR));
  try {
    dirs.push(installedPicoDir());
  } catch {
    // The engine's package is not installed: only PICO_DIR and Debian's directory can help, and
    // the WASM engine itself is missing too, which createPicoEngine reports.
  }
  dirs.push("/usr/share/pico/lang");
  return dirs;
}

/** sha256 and size of `bytes` against the pin of `name`: undefined when they match, else why not. */
export function checkPinned(name: string, bytes: Uint8Array): string | undefined {
  const pin = PINNED[name];
  if (!pin) return `${name} is not a pinned Pico file`;
  if (bytes.length !== pin.bytes) return `${name} has ${bytes.length} bytes, expected ${pin.bytes}`;
  const sha = createHash("sha256").update(bytes).digest("hex");
  return sha === pin.sha256 ? undefined : `${name} has sha256 ${sha}, expected ${pin.sha256}`;
}

/**
 * Reads and verifies a language's files from the first directory that has both. Throws an Error
 * that names the directories and how to fill them when none has, or when a file is not the pinned one.
 */
export function loadLingware(lang: PicoLang, dirs: string[] = picoDirs()): Lingware {
  const names = FILES[lang];
  for (const dir of dirs) {
    const ta = path.join(dir, names.ta);
    const sg = path.join(dir, names.sg);
    if (!existsSync(ta) || !existsSync(sg)) continue;
    const files = { ta: readFileSync(ta), sg: readFileSync(sg) };
    const problem = checkPinned(names.ta, files.ta) ?? checkPinned(names.sg, files.sg);
    if (problem) throw new Error(`Pico's language files in ${dir} are not the pinned ones: ${problem} (run 'node scripts/install-pico.mjs', or copy the files listed in docs/voices.md into PICO_DIR)`);
    return { dir, ...files };
  }
  throw new Error(
    `Pico's ${lang} language files (${names.ta}, ${names.sg}) are in none of ${dirs.join(", ")}: run 'node scripts/install-pico.mjs' (npm ci does), or copy them into a directory named by PICO_DIR`,
  );
}
