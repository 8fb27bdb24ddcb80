// Koa middleware that serves the publisher console at /console: index.html
// (no-cache) and content-hashed assets (immutable for a year), each with an
// ETag and a gzip variant, all under one strict Content-Security-Policy.
//
// Where the files come from:
// - running compiled (the image: dist/console/serve.js): console/dist/, written by
//   `npm run build` (console/build.ts) in the image's build stage;
// - running from source (`npm start`, the tests: tsx): built in memory with esbuild
//   on the first request, once per process, so a fresh clone needs no build step and
//   an old console/dist/ is never served by mistake.
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { gzipSync } from "node:zlib";
import type { Context, Next } from "koa";
import { buildConsole, consoleRoot, type BuiltFile, type Manifest } from "./build.js";

/**
 * Only files from the gateway itself; no inline script or style, no eval, no frames,
 * nobody may frame the console. Audio may come from the gateway, from blob: URLs (the
 * pronunciation preview, fetched with the token) and from an https audio host
 * (AUDIO_BASE_URL may point at a CDN).
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: https:",
  "media-src 'self' blob: https:",
  "connect-src 'self'",
  "font-src 'self'",
  "manifest-src 'self'",
  "form-action 'none'",
  "base-uri 'none'",
  "frame-src 'none'",
  "frame-ancestors 'none'",
].join("; ");

interface Served {
  body: Buffer;
  gzip: Buffer;
  etag: string;
  type: string;
  immutable: boolean;
}

const TYPES: Record<string, string> = {
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".html": "text/html; charset=utf-8",
  ".json": "application/json; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
};

function served(name: string, contents: Uint8Array, hash?: string): Served {
  const body = Buffer.from(contents);
  return {
    body,
    gzip: gzipSync(body, { level: 9 }),
    etag: `"${hash ?? createHash("sha256").update(body).digest("base64url").slice(0, 16)}"`,
    type: TYPES[path.extname(name)] ?? "application/octet-stream",
    immutable: name !== "index.html",
  };
}

export interface ConsoleFiles {
  files: Map<string, Served>;
  manifest: Manifest;
  source: "dist" | "memory";
}

const fromSource = import.meta.url.endsWith(".ts");
let loading: Promise<ConsoleFiles> | undefined;

async function readDist(dir: string): Promise<ConsoleFiles> {
  const manifest = JSON.parse(await readFile(path.join(dir, "manifest.json"), "utf8")) as Manifest;
  const files = new Map<string, Served>();
  for (const name of Object.keys(manifest.files)) files.set(name, served(name, await readFile(path.join(dir, name))));
  return { files, manifest, source: "dist" };
}

async function inMemory(): Promise<ConsoleFiles> {
  const build = buildConsole();
  const files = new Map<string, Served>();
  for (const f of build.files as BuiltFile[]) files.set(f.name, served(f.name, f.contents, f.hash));
  return { files, manifest: build.manifest, source: "memory" };
}

/** The console's files: loaded (or built) once per process. */
export function consoleFiles(): Promise<ConsoleFiles> {
  loading ??= (async () => {
    const dist = path.join(consoleRoot(), "dist");
    if (!fromSource && existsSync(path.join(dist, "manifest.json"))) return readDist(dist);
    return inMemory();
  })();
  // A failed build is tried again on the next request (e.g. after a source fix).
  loading.catch(() => (loading = undefined));
  return loading;
}

function securityHeaders(ctx: Context): void {
  ctx.set("Content-Security-Policy", CONSOLE_CSP);
  ctx.set("X-Content-Type-Options", "nosniff");
  ctx.set("Referrer-Policy", "no-referrer");
  ctx.set("X-Frame-Options", "DENY");
  ctx.set("Cross-Origin-Opener-Policy", "same-origin");
}

/** Serves GET/HEAD under /console; every other request passes on. */
export function consoleMiddleware(opts: { log?: { error(o: object, m: string): void } } = {}) {
  return async function console(ctx: Context, next: Next): Promise<void> {
    const p = ctx.path;
    if (p !== "/console" && !p.startsWith("/console/")) return next();
    if (ctx.method !== "GET" && ctx.method !== "HEAD") return next();
    securityHeaders(ctx);
    if (p === "/console") {
      ctx.status = 308;
      ctx.redirect("/console/");
      return;
    }
    let all: ConsoleFiles;
    try {
      all = await consoleFiles();
    } catch (err) {
      opts.log?.error({ err: { message: (err as Error).message } }, "console build failed");
      ctx.status = 503;
      ctx.body = { result: "error", message: "The console is not available: its build failed (run npm run build)" };
      return;
    }
    const rest = p.slice("/console/".length);
    // Every path that is not an asset is the app (it routes by the URL's fragment).
    const f = rest.startsWith("assets/") ? all.files.get(rest) : all.files.get("index.html");
    if (!f) {
      ctx.status = 404;
      ctx.body = { result: "fail", message: "Not found" };
      return;
    }
    ctx.set("ETag", f.etag);
    ctx.set("Vary", "Accept-Encoding");
    ctx.set("Cache-Control", f.immutable ? "public, max-age=31536000, immutable" : "no-cache");
    ctx.type = f.type;
    const inm = ctx.get("If-None-Match");
    if (inm && inm.split(",").some((t) => t.trim().replace(/^W\//, "") === f.etag)) {
      ctx.status = 304;
      return;
    }
    if (ctx.acceptsEncodings("gzip", "identity") === "gzip") {
      ctx.set("Content-Encoding", "gzip");
      ctx.body = f.gzip;
    } else {
      ctx.body = f.body;
    }
  };
}
