// Web and mail addresses in running text. Listeners need the site, not the
// protocol, path or query string, so only the host is read ("example dot com").
import { langKey } from "./lang.js";

const DOT = { en: "dot", de: "Punkt" };
const AT = { en: "at", de: "at" };
const UNDERSCORE = { en: "underscore", de: "Unterstrich" };

// Bare hosts ("example.com") are only recognised with a common top-level
// domain, so "z.B." or "3.5" never look like one.
const TLDS = "com|org|net|edu|gov|int|mil|info|biz|io|ai|app|dev|news|online|tv|fm|me|de|at|ch|li|eu|uk|us|ca|fr|it|es|nl|be|pl|se|no|dk|fi|cz|au|nz|jp|cn|ru|br|in";

/** Matches http(s) URLs, bare www. hosts, bare hosts with a common TLD and mail addresses; trailing punctuation is not part of them. */
export const URL_PATTERN = new RegExp(
  [
    String.raw`\b(?:https?:\/\/[^\s<>"']+`,
    String.raw`www\.[^\s<>"']+`,
    String.raw`[\w.+-]+@[\w-]+(?:\.[\w-]+)+`,
    String.raw`(?<![\p{L}\d@._-])(?:[\p{L}\d](?:[\p{L}\d-]*[\p{L}\d])?\.)+(?:${TLDS})(?![\p{L}\d@-]|\.[\p{L}\d])(?:\/[^\s<>"']*)?)`,
  ].join("|"),
  "giu",
);

const TRAILING = /[.,;:!?)\]}'"”’]+$/u;

function speakHost(host: string, dot: string): string {
  return host
    .replace(/^www\./i, "")
    .split(".")
    .filter(Boolean)
    .join(` ${dot} `);
}

export function readUrls(text: string, lang: string): string {
  const key = langKey(lang);
  return text.replace(URL_PATTERN, (match) => {
    const trail = TRAILING.exec(match)?.[0] ?? "";
    const addr = match.slice(0, match.length - trail.length);
    if (addr.includes("@") && !/^https?:/i.test(addr)) {
      const [user, domain] = addr.split("@");
      const name = user.split(".").join(` ${DOT[key]} `).replace(/_/g, ` ${UNDERSCORE[key]} `);
      return `${name} ${AT[key]} ${speakHost(domain, DOT[key])}${trail}`;
    }
    let host: string;
    try {
      host = new URL(/^https?:/i.test(addr) ? addr : `http://${addr}`).hostname;
    } catch {
      return match;
    }
    // The URL parser turns non-ASCII hosts into punycode, which nobody can read aloud.
    if (host.includes("xn--")) host = addr.replace(/^https?:\/\//i, "").split(/[/?#:]/)[0];
    return `${speakHost(host, DOT[key])}${trail}`;
  });
}
