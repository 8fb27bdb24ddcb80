// Conditional GET for the gateway's own validators. Unlike Koa's ctx.fresh,
// a request's Cache-Control: no-cache does not defeat it: that directive
// speaks to caches, not to the origin (RFC 9111), and browsers' fetch() adds
// it to every request whose script set If-None-Match itself.
import type { Context } from "koa";
import { matchesAny } from "./routes/audio.js";

/** True when the client's copy is current: answer 304 then. */
export function notModified(ctx: Context, etag: string, lastModified?: Date): boolean {
  const inm = ctx.get("If-None-Match");
  if (inm) return matchesAny(inm, etag);
  const ims = Date.parse(ctx.get("If-Modified-Since"));
  return lastModified !== undefined && Number.isFinite(ims) && Math.floor(lastModified.getTime() / 1000) <= Math.floor(ims / 1000);
}
