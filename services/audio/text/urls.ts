// Web and mail addresses in running text. Listeners need the site, not the
// path or query string, so only the host is read ("example dot com").
import { langKey } from "./lang.js";

const DOT = { en: "dot", de: "Punkt" };
const AT = { en: "at", de: "at" };

/** Matches http(s) URLs, bare www. hosts and mail addresses; trailing punctuation is not part of them. */
export const URL_PATTERN = /\b(?:https?:\/\/[^\s<>"']+|www\.[^\s<>"']+|[\w.+-]+@[\w-]+(?:\.[\w-]+)+)/giu;

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
      return `${user.split(".").join(` ${DOT[key]} `)} ${AT[key]} ${speakHost(domain, DOT[key])}${trail}`;
    }
    let host: string;
    try {
      host = new URL(/^https?:/i.test(addr) ? addr : `http://${addr}`).hostname;
    } catch {
      return match;
    }
    return `${speakHost(host, DOT[key])}${trail}`;
  });
}
