// The base of the absolute links the gateway hands out (player snippets and
// script URLs, embed pages, feeds, oEmbed, audio URLs). PUBLIC_BASE_URL when
// set (lib/public-url.ts). Without it, the request's own origin: every such
// answer then says Vary: Host so no shared cache hands one client's links to
// another, and X-Forwarded-Proto/-Host count only with TRUST_PROXY (Koa's
// `proxy`), since anyone can send them to a gateway not behind a proxy.
import type { Context } from "koa";
import { HttpError } from "./errors.js";

export const TRUST_PROXY_VARS = {
  TRUST_PROXY: { type: "boolean", default: false, description: "behind a proxy that sets X-Forwarded-Proto, -Host and -For: take the request's origin and address from them (Koa's proxy option); links use them only when PUBLIC_BASE_URL is unset" },
} as const;

// A name or address and an optional port: nothing that could leave an HTML attribute or a URL's authority.
const HOST = /^(?:[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*\.?|\[[0-9A-Fa-f:.]+\])(?::[0-9]{1,5})?$/;

// Checked bases by the Host header a request sent, per scheme: the same few hosts come on every
// request, and the check (and the string) need not be made again. Bounded: hosts are the client's choice.
const KNOWN_HOSTS_MAX = 1_000;
const checked = { http: new Map<string, string>(), https: new Map<string, string>() };
const trimmed = new Map<string, string>();

/** The base for this request's links, without a trailing slash. */
export function baseOf(ctx: Context, configured?: string): string {
  if (configured) {
    let base = trimmed.get(configured);
    if (base === undefined) trimmed.set(configured, (base = configured.replace(/\/+$/, "")));
    return base;
  }
  ctx.vary("Host");
  if (ctx.app.proxy) {
    ctx.vary("X-Forwarded-Host");
    ctx.vary("X-Forwarded-Proto");
  }
  const proto = ctx.protocol.toLowerCase();
  if (proto !== "http" && proto !== "https") throw new HttpError(400, "X-Forwarded-Proto: must be http or https");
  // Without a proxy the Host header as sent is the key (Koa's ctx.host splits and trims it every time).
  const sent = ctx.app.proxy ? undefined : ctx.req.headers.host;
  const known = checked[proto];
  const hit = sent === undefined ? undefined : known.get(sent);
  if (hit !== undefined) return hit;
  const host = ctx.host;
  if (host.length > 255 || !HOST.test(host)) throw new HttpError(400, "Host: must be a host name or address with an optional port");
  const base = `${proto}://${host.toLowerCase()}`;
  if (sent !== undefined) {
    if (known.size >= KNOWN_HOSTS_MAX) known.clear();
    known.set(sent, base);
  }
  return base;
}

/** A URL the articles service made: root-relative ones (no AUDIO_BASE_URL or PUBLIC_BASE_URL there) are the gateway's own, under the base. */
export function publicUrl(base: string, url: string): string {
  return url.startsWith("/") && !url.startsWith("//") ? base + url : url;
}
