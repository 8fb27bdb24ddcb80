// The rules of a source's settings, stated once for the gateway (request
// schemas) and the articles service (its own checks): docs/sources.md.
export const SOURCE_KINDS = ["rss", "atom", "jsonfeed", "sitemap"] as const;
export type SourceKind = (typeof SOURCE_KINDS)[number];
export const SOURCE_MODES = ["text", "page"] as const;
export const POLL_SECONDS = { min: 60, max: 86_400, default: 300 } as const;
export const BACKFILL_MAX = 1_000;
