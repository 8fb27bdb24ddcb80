// The platform's public address, for the absolute links it hands out: the
// gateway's player, embed, feed and oEmbed links (gateway/public-links.ts)
// and the articles service's audio URLs. Configured, never taken from a
// request when set: behind a proxy or a shared cache a request's Host is
// whatever the client chose.
import type { Logger } from "./log.js";

// http(s), no query or fragment: links are built by appending paths.
const BASE_PATTERN = "^https?://[^/?#\\s]+(/[^?#\\s]*)?$";

export const PUBLIC_URL_VARS = {
  PUBLIC_BASE_URL: { type: "string", format: "uri", pattern: BASE_PATTERN, description: "public base URL of every absolute link handed out (player snippets, embed pages, feeds, oEmbed, audio URLs); unset: each request's origin, answered with Vary: Host" },
  AUDIO_BASE_URL: { type: "string", format: "uri", pattern: BASE_PATTERN, description: "public base URL of audio files ({audio_url}), e.g. a CDN; default PUBLIC_BASE_URL/audio" },
} as const;

const trimmed = (url: string) => url.replace(/\/+$/, "");

/** The configured public base without trailing slashes, if any. */
export function publicBaseUrlOf(cfg: { PUBLIC_BASE_URL?: string }): string | undefined {
  return cfg.PUBLIC_BASE_URL ? trimmed(cfg.PUBLIC_BASE_URL) : undefined;
}

/**
 * Where audio URLs point: AUDIO_BASE_URL, else PUBLIC_BASE_URL + /audio, else
 * the root-relative /audio, which the gateway completes with the origin of
 * each request (the same rule as its other links).
 */
export function audioBaseUrlOf(cfg: { AUDIO_BASE_URL?: string; PUBLIC_BASE_URL?: string }): string {
  if (cfg.AUDIO_BASE_URL) return trimmed(cfg.AUDIO_BASE_URL);
  return `${publicBaseUrlOf(cfg) ?? ""}/audio`;
}

/** In production, links that follow the request are a misconfiguration worth a line at start-up. */
export function warnWithoutPublicBaseUrl(cfg: { PUBLIC_BASE_URL?: string }, env: Record<string, string | undefined>, log: Logger): void {
  if (env.NODE_ENV !== "production" || cfg.PUBLIC_BASE_URL) return;
  log.warn("PUBLIC_BASE_URL is not set: player, embed, feed, oEmbed and audio links follow each request's Host header (answered with Vary: Host); set it to the public https address");
}
