// The bounds on sources an operator may set (README's configuration table).
import type { SourcesOptions } from "./start.js";

export const SOURCE_VARS = {
  SOURCES_PER_PROJECT: { type: "integer", minimum: 1, maximum: 10_000, default: 50, description: "feeds and sitemaps one project may follow" },
  SOURCE_ITEMS_PER_POLL: { type: "integer", minimum: 1, maximum: 1_000, default: 20, description: "articles one poll of a source creates or updates at most; the rest follow a minute later" },
} as const;

export interface SourceConfig {
  SOURCES_PER_PROJECT: number;
  SOURCE_ITEMS_PER_POLL: number;
}

export function sourceOptionsOf(cfg: SourceConfig): Omit<SourcesOptions, "store"> {
  return {
    maxPerProject: cfg.SOURCES_PER_PROJECT,
    limits: { itemsPerPoll: cfg.SOURCE_ITEMS_PER_POLL },
  };
}
