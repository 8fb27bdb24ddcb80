// Builds the publisher console: esbuild bundles console/src/main.ts (code-split:
// the charts and uPlot are a chunk loaded only on the statistics pages), minifies,
// names every file by its content hash, and writes index.html and a manifest.
//
//   tsx console/build.ts          → console/dist/ (what `npm run build` and the image use)
//   buildConsole() in memory      → what console/serve.ts does when no dist exists
import { createHash } from "node:crypto";
import { createRequire } from "node:module";
import { mkdir, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";

/** The console's source folder, whether this runs as console/build.ts or compiled as dist/console/build.js. */
export function consoleRoot(): string {
  const here = path.dirname(fileURLToPath(import.meta.url));
  // Compiled: dist/console → the project's console/ two levels up.
  return path.basename(path.dirname(here)) === "dist" ? path.resolve(here, "../../console") : here;
}

export interface BuiltFile {
  /** Path under /console/, e.g. "assets/main-AB12CD.js" or "index.html". */
  name: string;
  contents: Uint8Array;
  /** Content hash (also in the name of every file but index.html). */
  hash: string;
}

export interface Manifest {
  entry: string;
  css: string[];
  files: Record<string, { bytes: number; gzip: number }>;
  /** Gzipped size of the JavaScript the first page loads (entry + its static imports). */
  firstPageJsGzip: number;
  totalJsGzip: number;
}

export interface BuildResult {
  files: BuiltFile[];
  manifest: Manifest;
}

const require = createRequire(import.meta.url);

const hashOf = (b: Uint8Array) => createHash("sha256").update(b).digest("base64url").slice(0, 16);

function indexHtml(entry: string, css: string[], preload: string[]): string {
  // No inline script or style: the CSP (serve.ts) allows only files from /console/.
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>Article audio console</title>
${css.map((c) => `<link rel="stylesheet" href="/console/${c}">`).join("\n")}
${preload.map((p) => `<link rel="modulepreload" href="/console/${p}">`).join("\n")}
<script type="module" src="/console/${entry}"></script>
</head>
<body>
<div id="app"><p class="boot">Loading…</p></div>
<noscript><p>The console needs JavaScript.</p></noscript>
</body>
</html>
`;
}

/**
 * Synchronous on purpose: esbuild's asynchronous API was seen to never settle when first
 * called inside the running platform (its service process started mid-request), while the
 * synchronous one always returns. A build takes a few hundred milliseconds, once per process.
 */
export function buildConsole(): BuildResult {
  const esbuild = require("esbuild") as typeof import("esbuild");
  const root = consoleRoot();
  const out = path.join(root, "dist");
  const res = esbuild.buildSync({
    entryPoints: { main: path.join(root, "src/main.ts") },
    bundle: true,
    splitting: true,
    format: "esm",
    minify: true,
    sourcemap: false,
    target: ["chrome110", "firefox115", "safari16"],
    outdir: path.join(out, "assets"),
    entryNames: "[name]-[hash]",
    chunkNames: "[name]-[hash]",
    assetNames: "[name]-[hash]",
    metafile: true,
    write: false,
    legalComments: "none",
    logLevel: "silent",
    loader: { ".json": "json" },
  });
  const files: BuiltFile[] = [];
  let entry = "";
  const css: string[] = [];
  const rel = (p: string) => path.relative(out, p).split(path.sep).join("/");
  for (const f of res.outputFiles) {
    const name = rel(f.path);
    files.push({ name, contents: f.contents, hash: hashOf(f.contents) });
  }
  const meta = res.metafile!;
  const preload: string[] = [];
  for (const [outPath, o] of Object.entries(meta.outputs)) {
    const name = rel(path.resolve(process.cwd(), outPath));
    if (o.entryPoint && /(^|\/)src\/main\.ts$/.test(o.entryPoint)) {
      if (name.endsWith(".js")) {
        entry = name;
        for (const imp of o.imports) if (imp.kind === "import-statement") preload.push(rel(path.resolve(process.cwd(), imp.path)));
        if (o.cssBundle) css.push(rel(path.resolve(process.cwd(), o.cssBundle)));
      }
    }
  }
  if (!entry) throw new Error("console build: no entry point in the output");
  const html = new TextEncoder().encode(indexHtml(entry, css, preload));
  files.push({ name: "index.html", contents: html, hash: hashOf(html) });

  const sizes: Manifest["files"] = {};
  for (const f of files) sizes[f.name] = { bytes: f.contents.length, gzip: gzipSync(f.contents, { level: 9 }).length };
  const js = files.filter((f) => f.name.endsWith(".js"));
  const manifest: Manifest = {
    entry,
    css,
    files: sizes,
    firstPageJsGzip: [entry, ...preload].reduce((n, f) => n + (sizes[f]?.gzip ?? 0), 0),
    totalJsGzip: js.reduce((n, f) => n + sizes[f.name].gzip, 0),
  };
  return { files, manifest };
}

/** Writes a build to console/dist/ (replacing what was there). */
export async function writeConsole(build: BuildResult, dir = path.join(consoleRoot(), "dist")): Promise<string> {
  await rm(dir, { recursive: true, force: true });
  for (const f of build.files) {
    const p = path.join(dir, f.name);
    await mkdir(path.dirname(p), { recursive: true });
    await writeFile(p, f.contents);
  }
  await writeFile(path.join(dir, "manifest.json"), JSON.stringify(build.manifest, null, 2) + "\n");
  return dir;
}

const isMain = process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (isMain) {
  const build = buildConsole();
  const dir = await writeConsole(build);
  const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;
  console.log(`console built into ${dir}`);
  for (const [name, s] of Object.entries(build.manifest.files)) console.log(`  ${name.padEnd(40)} ${kb(s.bytes).padStart(10)}  gzip ${kb(s.gzip).padStart(9)}`);
  console.log(`  JavaScript gzip: first page ${kb(build.manifest.firstPageJsGzip)}, total ${kb(build.manifest.totalJsGzip)}`);
}
