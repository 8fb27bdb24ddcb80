// Outbound HTTP for URLs that publishers control (recrawls, webhooks). Every
// hop is resolved here, checked, and then connected to exactly the checked
// address, so neither a redirect nor a DNS answer that changes between check
// and connect (rebinding) can point us at an internal service.
import { lookup as dnsLookup } from "node:dns/promises";
import http from "node:http";
import https from "node:https";
import { isIP, type LookupFunction } from "node:net";
import zlib from "node:zlib";
import { blockedReason } from "./address.js";
import { portOf, type AllowPrivate } from "./allow-list.js";
import { raceAbort } from "../race-abort.js";

export type UnsafeUrlCode = "bad_url" | "scheme" | "credentials" | "blocked_address";
export type FetchLimitCode = "timeout" | "too_large" | "too_many_redirects" | "content_type" | "dns";

/** The URL (or a redirect target) is not something we may contact. */
export class UnsafeUrlError extends Error {
  constructor(
    message: string,
    readonly code: UnsafeUrlCode = "blocked_address",
  ) {
    super(message);
    this.name = "UnsafeUrlError";
  }
}

/** The target was allowed but the exchange broke one of our limits. */
export class FetchLimitError extends Error {
  constructor(
    message: string,
    readonly code: FetchLimitCode = "timeout",
  ) {
    super(message);
    this.name = "FetchLimitError";
  }
}

export interface ResolvedAddress {
  address: string;
  family: number;
}

export interface SafeFetchOptions {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Whole exchange including redirects; default 10 s. */
  timeoutMs?: number;
  /** TCP (and TLS) connect per hop; default min(timeoutMs, 10 s). */
  connectTimeoutMs?: number;
  /** Decoded body size limit; default 5 MiB. */
  maxBytes?: number;
  /** Default 5; exceeding it is a FetchLimitError. */
  maxRedirects?: number;
  /** Allowed media types of a 2xx response ("text/html"); unset accepts any. */
  accept?: string[];
  /** Private targets that may be reached anyway (FETCH_ALLOW_PRIVATE, tests' loopback servers); see allow-list.ts. */
  allowPrivate?: AllowPrivate;
  /** Replaces DNS resolution; tests use it to show the checked address is the one connected to. */
  resolve?: (host: string) => Promise<ResolvedAddress[]>;
  signal?: AbortSignal;
}

export interface SafeFetchResponse {
  status: number;
  url: string;
  headers: Headers;
  body: Buffer;
}

const DEFAULT_TIMEOUT_MS = 10_000;
const DEFAULT_MAX_BYTES = 5 * 1024 * 1024;
const DEFAULT_MAX_REDIRECTS = 5;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);
// Headers that authenticate the caller to one origin and must not follow a redirect elsewhere.
const CREDENTIAL_HEADERS = new Set(["authorization", "cookie", "proxy-authorization"]);

export async function safeFetch(url: string, opts: SafeFetchOptions = {}): Promise<SafeFetchResponse> {
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(new FetchLimitError(`no complete response within ${timeoutMs} ms`, "timeout")), timeoutMs);
  const onOuterAbort = () => deadline.abort(opts.signal?.reason ?? new Error("aborted"));
  if (opts.signal?.aborted) onOuterAbort();
  opts.signal?.addEventListener("abort", onOuterAbort, { once: true });
  try {
    return await follow(url, opts, deadline.signal);
  } finally {
    clearTimeout(timer);
    opts.signal?.removeEventListener("abort", onOuterAbort);
  }
}

async function follow(startUrl: string, opts: SafeFetchOptions, signal: AbortSignal): Promise<SafeFetchResponse> {
  const maxRedirects = opts.maxRedirects ?? DEFAULT_MAX_REDIRECTS;
  let target = parseTarget(startUrl);
  let method = (opts.method ?? "GET").toUpperCase();
  let body = opts.body;
  let headers = lowerCaseKeys(opts.headers ?? {});
  const origin = target.origin;
  for (let hop = 0; ; hop++) {
    // Userinfo in a URL is a credential for that origin only.
    const hopHeaders = { ...headers };
    if (target.username || target.password) {
      if (target.origin !== origin) throw new UnsafeUrlError("a redirect target carries credentials", "credentials");
      const basic = Buffer.from(`${decodeURIComponent(target.username)}:${decodeURIComponent(target.password)}`).toString("base64");
      hopHeaders.authorization = `Basic ${basic}`;
    }
    const pinned = await checkedAddress(target, opts, signal);
    const res = await exchange(target, pinned, method, hopHeaders, body, opts, signal);
    const location = res.headers.get("location");
    if (!REDIRECTS.has(res.status) || !location) return checkType(res, opts);
    if (hop >= maxRedirects) throw new FetchLimitError(`more than ${maxRedirects} redirects`, "too_many_redirects");
    let next: URL;
    try {
      next = parseTarget(new URL(location, target).href);
    } catch (err) {
      if (err instanceof UnsafeUrlError) throw new UnsafeUrlError(`redirect refused: ${err.message}`, err.code);
      throw err;
    }
    if (res.status === 303 || ((res.status === 301 || res.status === 302) && method === "POST")) {
      if (method !== "HEAD") method = "GET";
      body = undefined;
      headers = withoutKeys(headers, ["content-type", "content-length"]);
    }
    if (next.origin !== target.origin) headers = withoutKeys(headers, [...CREDENTIAL_HEADERS]);
    target = next;
  }
}

function parseTarget(raw: string): URL {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new UnsafeUrlError("not a valid URL", "bad_url");
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") throw new UnsafeUrlError(`scheme ${u.protocol} is not allowed`, "scheme");
  return u;
}

function hostOf(u: URL): string {
  return u.hostname.replace(/^\[(.*)\]$/, "$1");
}

async function checkedAddress(u: URL, opts: SafeFetchOptions, signal: AbortSignal): Promise<ResolvedAddress> {
  const host = hostOf(u);
  let addresses: ResolvedAddress[];
  const literal = isIP(host);
  if (literal) addresses = [{ address: host, family: literal }];
  else {
    try {
      addresses = await raceAbort(opts.resolve ? opts.resolve(host) : dnsLookup(host, { all: true, verbatim: true }), signal);
    } catch (err) {
      if (signal.aborted) throw signal.reason;
      throw new FetchLimitError(`cannot resolve ${host}: ${(err as NodeJS.ErrnoException).code ?? "lookup failed"}`, "dns");
    }
    if (addresses.length === 0) throw new FetchLimitError(`cannot resolve ${host}`, "dns");
  }
  refuseBlocked(host, addresses, portOf(u), opts);
  return addresses[0];
}

function refuseBlocked(host: string, addresses: ResolvedAddress[], port: number, opts: SafeFetchOptions): void {
  // One bad answer is enough to refuse: we would not know which one a retry would get.
  for (const a of addresses) {
    const why = blockedReason(a.address);
    if (why && !opts.allowPrivate?.(host, a.address, port)) throw new UnsafeUrlError(`${host} resolves to a ${why} address`, "blocked_address");
  }
}

/**
 * Checks a URL before it is stored for later use (a webhook URL at
 * settings:set): the same scheme and address rules as safeFetch, without
 * contacting it. A name that does not resolve now is accepted (DNS may not be
 * set up yet, and delivery checks again); one that resolves to a private
 * address is refused unless allowed. Throws UnsafeUrlError.
 */
export async function checkTarget(url: string, opts: Pick<SafeFetchOptions, "allowPrivate" | "resolve"> & { dnsTimeoutMs?: number } = {}): Promise<void> {
  const u = parseTarget(url);
  const host = hostOf(u);
  const literal = isIP(host);
  let addresses: ResolvedAddress[] = [];
  if (literal) addresses = [{ address: host, family: literal }];
  else {
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(new Error("DNS timeout")), opts.dnsTimeoutMs ?? 3000);
    try {
      addresses = await raceAbort(opts.resolve ? opts.resolve(host) : dnsLookup(host, { all: true, verbatim: true }), deadline.signal);
    } catch {
      return;
    } finally {
      clearTimeout(timer);
    }
  }
  refuseBlocked(host, addresses, portOf(u), opts);
}

function pinnedLookup(pinned: ResolvedAddress): LookupFunction {
  return (_host, options, callback) => {
    // With autoSelectFamily (default since Node 20) net asks for all addresses.
    if ((options as { all?: boolean }).all) (callback as unknown as (e: null, a: ResolvedAddress[]) => void)(null, [pinned]);
    else callback(null, pinned.address, pinned.family);
  };
}

function exchange(
  u: URL,
  pinned: ResolvedAddress,
  method: string,
  headers: Record<string, string>,
  body: string | Buffer | undefined,
  opts: SafeFetchOptions,
  signal: AbortSignal,
): Promise<SafeFetchResponse> {
  const maxBytes = opts.maxBytes ?? DEFAULT_MAX_BYTES;
  const connectTimeoutMs = opts.connectTimeoutMs ?? Math.min(opts.timeoutMs ?? DEFAULT_TIMEOUT_MS, DEFAULT_TIMEOUT_MS);
  const lib = u.protocol === "https:" ? https : http;
  const lookup = pinnedLookup(pinned);
  // A fresh agent per hop: a pooled socket could belong to another resolution.
  const agent = new lib.Agent({ keepAlive: false, lookup } as http.AgentOptions);
  const sendHeaders: Record<string, string> = { "accept-encoding": "gzip, deflate, br", "user-agent": "article-audio/1", ...headers };
  if (body !== undefined) sendHeaders["content-length"] = String(Buffer.byteLength(body));
  return new Promise<SafeFetchResponse>((resolve, reject) => {
    let settled = false;
    const finish = (err: unknown, value?: SafeFetchResponse) => {
      if (settled) return;
      settled = true;
      clearTimeout(connectTimer);
      signal.removeEventListener("abort", onAbort);
      agent.destroy();
      if (err) reject(err);
      else resolve(value!);
    };
    const req = lib.request(
      {
        protocol: u.protocol,
        host: hostOf(u),
        port: u.port || undefined,
        path: `${u.pathname}${u.search}`,
        method,
        headers: sendHeaders,
        agent,
        lookup,
        servername: isIP(hostOf(u)) ? undefined : hostOf(u),
      },
      (res) => {
        const status = res.statusCode ?? 0;
        const responseHeaders = toHeaders(res.headers);
        const declared = Number(res.headers["content-length"]);
        if (Number.isFinite(declared) && declared > maxBytes && !isCompressed(res.headers)) {
          req.destroy();
          return finish(new FetchLimitError(`response of ${declared} bytes exceeds ${maxBytes}`, "too_large"));
        }
        // Redirect bodies are never needed; skip reading them.
        if (REDIRECTS.has(status) && res.headers.location) {
          res.resume();
          return finish(null, { status, url: u.href, headers: responseHeaders, body: Buffer.alloc(0) });
        }
        let stream: NodeJS.ReadableStream = res;
        const decoder = decoderFor(res.headers["content-encoding"]);
        if (decoder) {
          res.pipe(decoder);
          stream = decoder;
          res.on("error", (err) => finish(err));
        }
        const chunks: Buffer[] = [];
        let size = 0;
        stream.on("data", (chunk: Buffer) => {
          size += chunk.length;
          if (size > maxBytes) {
            req.destroy();
            decoder?.destroy();
            return finish(new FetchLimitError(`response exceeds ${maxBytes} bytes`, "too_large"));
          }
          chunks.push(chunk);
        });
        stream.on("end", () => finish(null, { status, url: u.href, headers: responseHeaders, body: Buffer.concat(chunks) }));
        stream.on("error", (err) => finish(err));
        res.on("close", () => {
          if (!res.complete) finish(new Error("connection closed before the response was complete"));
        });
      },
    );
    const connectTimer = setTimeout(() => {
      req.destroy();
      finish(new FetchLimitError(`no connection to ${u.host} within ${connectTimeoutMs} ms`, "timeout"));
    }, connectTimeoutMs);
    req.on("socket", (socket) => {
      const connectedEvent = u.protocol === "https:" ? "secureConnect" : "connect";
      if (!socket.connecting) clearTimeout(connectTimer);
      else socket.once(connectedEvent, () => clearTimeout(connectTimer));
    });
    const onAbort = () => {
      req.destroy();
      finish(signal.reason);
    };
    if (signal.aborted) return onAbort();
    signal.addEventListener("abort", onAbort, { once: true });
    req.on("error", (err) => finish(err));
    req.end(body);
  });
}

function checkType(res: SafeFetchResponse, opts: SafeFetchOptions): SafeFetchResponse {
  if (!opts.accept || res.status < 200 || res.status >= 300) return res;
  const mediaType = (res.headers.get("content-type") ?? "").split(";")[0].trim().toLowerCase();
  if (!opts.accept.some((a) => a.toLowerCase() === mediaType)) {
    throw new FetchLimitError(`content type ${mediaType || "(none)"} is not accepted`, "content_type");
  }
  return res;
}

function isCompressed(h: http.IncomingHttpHeaders): boolean {
  const enc = (h["content-encoding"] ?? "identity").toLowerCase();
  return enc !== "identity";
}

function decoderFor(encoding: string | undefined): zlib.Gunzip | zlib.Inflate | zlib.BrotliDecompress | undefined {
  switch ((encoding ?? "").trim().toLowerCase()) {
    case "gzip":
    case "x-gzip":
      return zlib.createGunzip();
    case "deflate":
      return zlib.createInflate();
    case "br":
      return zlib.createBrotliDecompress();
    default:
      return undefined;
  }
}

function toHeaders(raw: http.IncomingHttpHeaders): Headers {
  const h = new Headers();
  for (const [name, value] of Object.entries(raw)) {
    if (value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) {
      try {
        h.append(name, v);
      } catch {
        // A header the fetch Headers class rejects is of no use to callers.
      }
    }
  }
  return h;
}

function lowerCaseKeys(h: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(h).map(([k, v]) => [k.toLowerCase(), v]));
}

function withoutKeys(h: Record<string, string>, keys: string[]): Record<string, string> {
  return Object.fromEntries(Object.entries(h).filter(([k]) => !keys.includes(k)));
}
