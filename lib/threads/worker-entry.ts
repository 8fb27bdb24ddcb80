// Where a worker thread starts. Compiled output starts the sibling .js file
// as it is. From TypeScript sources (tsx: `npm start`, tests, `npm run
// stack`) a thread would need tsx's loader of its own (about 18 MB per
// thread); instead the entry and everything it imports is bundled once into
// plain JavaScript with esbuild, which tsx brings along, and each thread
// starts that from a data: URL. Used by the speech engine's and the content
// work's pools. A child process (the native speech host) gets the same bundle
// as a file of its own, which it reads once at start.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const bundles = new Map<string, Promise<string>>();

/** `entry`: the worker module as a URL next to the caller, e.g. new URL("./worker.ts", import.meta.url). */
export async function workerEntry(entry: URL): Promise<URL> {
  const code = await bundledEntry(entry);
  return typeof code === "string" ? new URL(`data:text/javascript,${encodeURIComponent(code)}`) : code;
}

export interface ChildEntry {
  /** The module to start with `fork`. */
  file: string;
  /** Removes the file when it was written for this child (call once the child has loaded it). */
  dispose(): void;
}

/** Like workerEntry, for a child process: `fork` needs a file, not a data: URL. */
export async function childEntry(entry: URL): Promise<ChildEntry> {
  const code = await bundledEntry(entry);
  if (typeof code !== "string") return { file: fileURLToPath(code), dispose: () => {} };
  const dir = mkdtempSync(path.join(tmpdir(), "article-audio-child-"));
  const file = path.join(dir, `${path.basename(entry.pathname, ".ts")}.mjs`);
  writeFileSync(file, code);
  return { file, dispose: () => rmSync(dir, { recursive: true, force: true }) };
}

/** The module to start as it is (a URL), or the bundled code of a TypeScript entry. */
function bundledEntry(entry: URL): Promise<URL | string> {
  if (!entry.pathname.endsWith(".ts")) return Promise.resolve(entry);
  const compiled = new URL(entry.href.replace(/\.ts$/, ".js"));
  // Running compiled output whose caller still names the .ts file: nothing to bundle.
  if (!import.meta.url.endsWith(".ts")) return Promise.resolve(compiled);
  let pending = bundles.get(entry.href);
  if (!pending) {
    pending = bundle(fileURLToPath(entry));
    const mine = pending;
    // A failed bundle is not kept: the next worker start tries again.
    mine.catch(() => {
      if (bundles.get(entry.href) === mine) bundles.delete(entry.href);
    });
    bundles.set(entry.href, pending);
  }
  return pending;
}

interface Esbuild {
  build(options: Record<string, unknown>): Promise<{ outputFiles: Array<{ text: string }> }>;
  stop(): Promise<void> | void;
}

// One bundle at a time: each ends by stopping esbuild's service, which would leave another
// build in flight waiting forever (two pools starting together hung their threads' start).
let previous: Promise<unknown> = Promise.resolve();

function bundle(entry: string): Promise<string> {
  const mine = previous.then(() => bundleNow(entry));
  previous = mine.catch(() => undefined);
  return mine;
}

async function bundleNow(entry: string): Promise<string> {
  // Resolved from tsx's own package: esbuild is its dependency, not ours.
  const tsxPackage = createRequire(import.meta.url).resolve("tsx/package.json");
  const esbuild = createRequire(tsxPackage)("esbuild") as Esbuild;
  try {
    // Optional dependencies a library probes with require() (linkedom: canvas) are then simply absent.
    const { outputFiles } = await esbuild.build({ entryPoints: [entry], bundle: true, platform: "node", format: "esm", target: "node20", write: false, logLevel: "silent" });
    return outputFiles[0].text;
  } finally {
    // The async API, then stop(): esbuild's synchronous one keeps a worker thread (~13 MB) for good.
    await esbuild.stop();
  }
}
