// The player script as served: read once, with a gzip variant and a content
// hash. /player/v1/player.js is cached for an hour (so fixes reach pages
// soon); ?v=<hash> URLs (the embed page uses them) are immutable for a year.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { gzipSync } from "node:zlib";
import type { Context } from "koa";
import { notModified } from "../conditional.js";

const source = readFileSync(new URL("./player.js", import.meta.url));

export const playerAsset = {
  source,
  gzip: gzipSync(source, { level: 9 }),
  hash: createHash("sha256").update(source).digest("base64url").slice(0, 16),

  serve(ctx: Context): void {
    const etag = `"${this.hash}"`;
    ctx.type = "application/javascript; charset=utf-8";
    ctx.set("ETag", etag);
    ctx.set("Vary", "Accept-Encoding");
    ctx.set("Cache-Control", ctx.query.v === this.hash ? "public, max-age=31536000, immutable" : "public, max-age=3600");
    if (notModified(ctx, etag)) {
      ctx.status = 304;
      return;
    }
    if (ctx.acceptsEncodings("gzip", "identity") === "gzip") {
      ctx.set("Content-Encoding", "gzip");
      ctx.body = this.gzip;
    } else {
      ctx.body = this.source;
    }
  },
};
