import { domainToUnicode } from "node:url";

// Article URLs as people write them: with umlauts in the path, an IDN host,
// capitals in the scheme or host. Every URL an article is stored under, and
// every URL it is looked up by, goes through normalizeHttpUrl, so the Unicode
// form, the percent-encoded form and a differently-cased host are one URL.
// Shared by the gateway (its 400s) and the articles service (what it stores
// and matches), so direct RPC callers meet the same rules as REST clients.

/** Most characters of a URL, as given and once normalised (percent-encoding may lengthen it). */
export const URL_MAX_CHARS = 2_048;

/** What an accepted URL starts with; the WHATWG parser would also take "https:host" or "https:\\host", which nobody means. */
const ABSOLUTE_HTTP = /^https?:\/\//i;
const ESCAPE = /%[0-9a-f]{2}/gi;

/**
 * The WHATWG URL serialisation of an absolute http(s) URL or IRI (Node's
 * URL, as browsers parse it): scheme and host in lowercase, an IDN host in
 * punycode, the default port dropped, an empty path as "/", path, query and
 * fragment percent-encoded as UTF-8. One step more than the parser: the hex
 * digits of existing escapes in upper case (RFC 3986 6.2.2.1), so "%c3%bc"
 * and "ü" are the same URL too. Null when the text is not an absolute
 * http(s) URL. Idempotent: a normalised URL normalises to itself.
 */
export function normalizeHttpUrl(text: string): string | null {
  if (!ABSOLUTE_HTTP.test(text)) return null;
  let u: URL;
  try {
    u = new URL(text);
  } catch {
    return null;
  }
  if ((u.protocol !== "http:" && u.protocol !== "https:") || !u.hostname) return null;
  // Scheme and host never hold a "%" once parsed, so every escape left is in userinfo, path, query or fragment.
  return u.href.replace(ESCAPE, (e) => e.toUpperCase());
}

/**
 * What a lookup by URL matches: the normalised form, and the text exactly as
 * given when that differs (an article stored by a release before
 * normalisation, under a URL that was not normal, is still found by the URL
 * it was stored with).
 */
export function urlLookupForms(text: string): string[] {
  const normal = normalizeHttpUrl(text);
  return normal === null || normal === text ? [text] : [normal, text];
}

const ESCAPED_RUN = /(?:%[0-9A-Fa-f]{2})+/g;

/**
 * A normalised URL as people read it: the host in Unicode, escapes that spell
 * UTF-8 text decoded (other escapes, and a run that is not valid UTF-8, kept).
 * For matching patterns people write with umlauts (admission url rules); never
 * stored or handed out.
 */
export function readableUrl(normal: string): string {
  let u: URL;
  try {
    u = new URL(normal);
  } catch {
    return normal;
  }
  const host = domainToUnicode(u.hostname) || u.hostname;
  const rest = normal.slice(normal.indexOf(u.host) + u.host.length).replace(ESCAPED_RUN, (run) => {
    try {
      const text = decodeURIComponent(run);
      // Only letters and the like: a decoded "/", "?", "#", "%" or space would change what the URL says.
      return /[\u0000-\u0020%/?#&=+]/.test(text) ? run : text;
    } catch {
      return run;
    }
  });
  return `${u.protocol}//${normal.slice(u.protocol.length + 2, normal.indexOf(u.host))}${host}${u.port ? `:${u.port}` : ""}${rest}`;
}
