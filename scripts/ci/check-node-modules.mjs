// Fails when node_modules does not hold everything package-lock.json promises.
//   node scripts/ci/check-node-modules.mjs [--omit=dev]
// `npm ls` finds packages that are missing or have the wrong version, but not a package
// whose folder is there with only part of its files: what an npm that crashed while
// extracting ("Exit handler never called!", exit 0) leaves. So this also checks that each
// package's declared entry points (main, exports, bin) exist.
// Plain JavaScript without dependencies: it runs in the image build before anything else.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

const omitDev = process.argv.includes("--omit=dev");
const root = process.cwd();
const lock = JSON.parse(readFileSync(join(root, "package-lock.json"), "utf8"));

// The conditions Node.js itself resolves with; others (browser, react-native, types) name
// files that some published packages do not ship.
const RUNTIME_CONDITIONS = new Set(["node", "import", "require", "module-sync", "default"]);

/** The files the package's root export (".") names for Node.js. Subpath exports are not
 * checked: a few published packages declare subpaths they do not ship. */
function rootExportTargets(exports) {
  const isSubpathMap = exports && typeof exports === "object" && !Array.isArray(exports) &&
    Object.keys(exports).some((k) => k.startsWith("."));
  const root = isSubpathMap ? exports["."] : exports;
  const out = [];
  const walk = (value) => {
    if (typeof value === "string") {
      if (value.startsWith("./") && !value.includes("*")) out.push(value);
    } else if (Array.isArray(value)) {
      value.forEach(walk);
    } else if (value && typeof value === "object") {
      for (const [condition, v] of Object.entries(value)) if (RUNTIME_CONDITIONS.has(condition)) walk(v);
    }
  };
  walk(root);
  return out;
}

/** main may omit its extension or name a folder, as require() allows. */
function mainExists(dir, main) {
  const base = join(dir, main);
  return [base, `${base}.js`, `${base}.json`, `${base}.cjs`, `${base}.mjs`, join(base, "index.js")].some(
    (p) => existsSync(p),
  );
}

const problems = [];
let checked = 0;
for (const [path, entry] of Object.entries(lock.packages ?? {})) {
  if (!path || entry.link) continue;
  if (omitDev && (entry.dev || entry.devOptional)) continue;
  const dir = join(root, path);
  const manifestPath = join(dir, "package.json");
  if (!existsSync(manifestPath)) {
    // Optional packages for other platforms (and failed optional builds) are legitimately absent.
    if (!entry.optional && !entry.devOptional) problems.push(`${path}: missing`);
    continue;
  }
  checked++;
  let manifest;
  try {
    manifest = JSON.parse(readFileSync(manifestPath, "utf8"));
  } catch (err) {
    problems.push(`${path}: unreadable package.json (${err.message})`);
    continue;
  }
  if (entry.version && manifest.version !== entry.version) {
    problems.push(`${path}: version ${manifest.version}, lock says ${entry.version}`);
  }
  const files = [];
  if (typeof manifest.bin === "string") files.push(manifest.bin);
  else if (manifest.bin) files.push(...Object.values(manifest.bin));
  if (manifest.exports !== undefined) files.push(...rootExportTargets(manifest.exports));
  for (const file of files) {
    if (!existsSync(join(dir, file))) problems.push(`${path}: ${file} missing`);
  }
  if (typeof manifest.main === "string" && manifest.exports === undefined && !mainExists(dir, manifest.main)) {
    problems.push(`${path}: main ${manifest.main} missing`);
  }
}

if (problems.length > 0) {
  console.error(`node_modules is incomplete (${problems.length} problems):`);
  for (const p of problems.slice(0, 50)) console.error(`  ${p}`);
  process.exit(1);
}
console.log(`node_modules complete: ${checked} packages${omitDev ? " (without dev)" : ""}`);
