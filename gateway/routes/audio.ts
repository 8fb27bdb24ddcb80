// {audio_url}: MP3 files streamed from the blob store. No token on purpose:
// keys are unguessable and files immutable, so a URL works as a capability
// in <audio> tags, podcast apps and CDNs. Byte ranges let players seek.
// Every request asks the store, so a removed file answers 404 at once.
import type { Router } from "@koa/router";
import type { Context } from "koa";
import { assertSafeKey, type BlobInfo, type BlobStore } from "../../lib/blob/port.js";
import { HttpError } from "../errors.js";
import { PUBLIC_KEY_PATTERN } from "../listener-schemas.js";
import type { DownloadCounting } from "../podcast-downloads.js";

const PREFIX = "/audio/";

type Range = { start: number; end: number } | "unsatisfiable" | null;

/**
 * A single "bytes=" range, or null when the header is absent, malformed or
 * asks for several ranges (then the whole file is sent, as RFC 9110 allows).
 */
export function parseRange(header: string | undefined, size: number): Range {
  if (!header) return null;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m || (m[1] === "" && m[2] === "")) return null;
  if (m[1] === "") {
    const suffix = Number(m[2]);
    if (suffix === 0 || size === 0) return "unsatisfiable";
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(m[1]);
  const end = m[2] === "" ? size - 1 : Math.min(Number(m[2]), size - 1);
  if (m[2] !== "" && Number(m[2]) < start) return null;
  if (start >= size) return "unsatisfiable";
  return { start, end };
}

const quoted = (etag: string) => (/^(W\/)?"/.test(etag) ? etag : `"${etag}"`);
const opaque = (tag: string) => tag.trim().replace(/^W\//, "");

export function matchesAny(header: string, etag: string): boolean {
  if (header.trim() === "*") return true;
  return header.split(",").some((t) => opaque(t) === opaque(etag));
}

/** The key after /audio/; its slashes may arrive encoded (%2F), as API explorers send a path parameter. */
function keyOf(ctx: Context): string {
  try {
    const key = decodeURIComponent(ctx.path.slice(PREFIX.length));
    assertSafeKey(key);
    return key;
  } catch {
    throw new HttpError(404, "Audio file not found");
  }
}

function setValidators(ctx: Context, info: BlobInfo, etag: string): void {
  ctx.set("ETag", etag);
  ctx.set("Last-Modified", info.modified.toUTCString());
  // A file never changes, but it can be taken down (DELETE, superseded
  // revision): caches may keep it only as long as a superseded revision stays.
  ctx.set("Cache-Control", "public, max-age=600, immutable");
  ctx.set("Accept-Ranges", "bytes");
  ctx.set("Access-Control-Allow-Origin", "*");
}

const FEED_KEY = new RegExp(PUBLIC_KEY_PATTERN);

/** Feeds link their enclosures as `<file>?feed=<public key>&d=<seconds>` (routes/feeds.ts): only those requests are offered. */
function countDownload(ctx: Context, key: string, info: BlobInfo, range: { start: number; end: number } | null, counting: DownloadCounting): void {
  const feedKey = ctx.query.feed;
  if (typeof feedKey !== "string" || !FEED_KEY.test(feedKey) || !key.endsWith("/full.mp3")) return;
  const d = Number(ctx.query.d);
  const counted = counting.counter.observe({
    address: ctx.ip,
    userAgent: ctx.get("User-Agent"),
    file: key,
    size: info.size,
    durationSeconds: Number.isFinite(d) && d > 0 ? d : undefined,
    range: range ?? undefined,
  });
  if (counted) counting.record(feedKey, key.slice(0, key.indexOf("/")));
}

export function audioRoutes(router: Router, blobs: BlobStore, counting?: DownloadCounting): void {
  router.get(`${PREFIX}*key`, async (ctx) => {
    const key = keyOf(ctx);
    const info = await blobs.stat(key);
    if (!info) throw new HttpError(404, "Audio file not found");
    const etag = quoted(info.etag);

    const inm = ctx.get("If-None-Match");
    if (inm && matchesAny(inm, etag)) {
      setValidators(ctx, info, etag);
      ctx.status = 304;
      return;
    }

    // If-Range with a stale validator means "send me the whole new file".
    const ifRange = ctx.get("If-Range");
    const rangeHeader = ifRange && opaque(ifRange) !== opaque(etag) ? undefined : ctx.get("Range") || undefined;
    const range = parseRange(rangeHeader, info.size);
    if (range === "unsatisfiable") {
      throw new HttpError(416, `Range not satisfiable: the file has ${info.size} bytes`, { "Content-Range": `bytes */${info.size}` });
    }

    // Opened before any header is set: a file taken down since the stat (a delete or a superseded
    // revision's removal under way) is a plain 404, with no validators or cache headers left on it.
    let stream;
    if (ctx.method !== "HEAD") {
      try {
        stream = await blobs.read(key, range ?? undefined);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === "ENOENT") throw new HttpError(404, "Audio file not found");
        throw e;
      }
    }
    setValidators(ctx, info, etag);
    ctx.type = info.contentType || "audio/mpeg";
    if (range) {
      ctx.status = 206;
      ctx.set("Content-Range", `bytes ${range.start}-${range.end}/${info.size}`);
      ctx.length = range.end - range.start + 1;
    } else {
      ctx.status = 200;
      ctx.length = info.size;
    }
    if (!stream) return;
    if (counting) countDownload(ctx, key, info, range, counting);
    const length = ctx.length;
    ctx.body = stream;
    ctx.length = length; // assigning a stream clears the length koa knew
  });
}
