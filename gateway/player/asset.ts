// The player script as served: read once, with the message files inlined, a
// gzip variant and a content hash. /player/v1/player.js is cached for an hour
// (so fixes reach pages soon); ?v=<hash> URLs (the embed page uses them) are
// immutable for a year.
import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { gzipSync } from "node:zlib";
import type { Context } from "koa";
import { notModified } from "../conditional.js";

const MESSAGES_DIR = new URL("./messages/", import.meta.url);
/** Where player.js takes its texts: `{/*messages*\/}` in the source becomes `{en: {…}, de: {…}, …}`. */
const PLACEHOLDER = "{/*messages*/}";

/**
 * The player's texts, one file per language (messages/<language>.json, the
 * primary subtag: `de`, not `de-DE`). English is the reference: a key another
 * language lacks is taken from English, and a key English does not have is an error.
 */
export function loadMessages(dir: URL = MESSAGES_DIR): Record<string, Record<string, string>> {
  const read = (lang: string) => JSON.parse(readFileSync(new URL(`${lang}.json`, dir), "utf8")) as Record<string, string>;
  const en = read("en");
  const out: Record<string, Record<string, string>> = {};
  for (const file of readdirSync(dir).filter((f) => /^[a-z]{2,3}\.json$/.test(f)).sort()) {
    const lang = file.slice(0, -5);
    const m = read(lang);
    const unknown = Object.keys(m).filter((k) => !(k in en));
    if (unknown.length) throw new Error(`player messages ${file}: keys English does not have: ${unknown.join(", ")}`);
    out[lang] = { ...en, ...m };
  }
  return out;
}

/** player.js with its messages in place. */
export function buildPlayer(source: string, messages = loadMessages()): Buffer {
  if (!source.includes(PLACEHOLDER)) throw new Error(`player.js: no ${PLACEHOLDER} placeholder for the messages`);
  return Buffer.from(source.replace(PLACEHOLDER, () => JSON.stringify(messages)));
}

const source = buildPlayer(readFileSync(new URL("./player.js", import.meta.url), "utf8"));

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
