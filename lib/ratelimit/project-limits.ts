// A project's API rate limits (docs/limits.md): the deployment's defaults, the
// project's own settings over them, and the key of each bucket. The gateway counts
// requests in these buckets (gateway/ratelimit.ts); the articles service paces
// bulk jobs through the same writes bucket (write-pacer.ts), so both read them here.
import type { RateLimitSettings } from "../project-settings.js";
import type { BucketPolicy } from "./port.js";

export type LimitClass = "reads" | "writes" | "imports";
export type ProjectLimits = Record<LimitClass, BucketPolicy>;

/** Defaults: a reader polling a few articles and a CMS publishing in bursts both fit comfortably. */
export const DEFAULT_LIMITS: ProjectLimits = Object.freeze({
  reads: { perSecond: 50, burst: 100 },
  writes: { perSecond: 10, burst: 20 },
  // Lines of a bulk import (docs/import.md): an archive loads at full speed, and a project's writes keep their own bucket.
  imports: { perSecond: 10_000, burst: 10_000 },
});

/** The bucket of a project and class, the same key wherever a bucket store is shared. */
export const projectBucketKey = (projectId: string, cls: LimitClass): string => `${projectId}.${cls}`;

/** A project's limits: its `rateLimit` settings over the deployment's defaults. */
export function mergeLimits(defaults: ProjectLimits, s: RateLimitSettings | undefined): ProjectLimits {
  return {
    reads: { ...defaults.reads, ...(s?.reads ?? {}) },
    writes: { ...defaults.writes, ...(s?.writes ?? {}) },
    imports: { ...defaults.imports, ...(s?.imports ?? {}) },
  };
}

export const RATE_LIMIT_VARS = {
  RATE_LIMIT_ENABLED: { type: "boolean", default: true, description: "per-project REST API rate limits (docs/limits.md); false turns them off" },
  RATE_LIMIT_READS_PER_SECOND: { type: "number", minimum: 0.001, maximum: 100_000, default: DEFAULT_LIMITS.reads.perSecond, description: "default read (GET) rate per project" },
  RATE_LIMIT_READS_BURST: { type: "integer", minimum: 1, maximum: 1_000_000, default: DEFAULT_LIMITS.reads.burst, description: "default read burst per project" },
  RATE_LIMIT_WRITES_PER_SECOND: { type: "number", minimum: 0.001, maximum: 100_000, default: DEFAULT_LIMITS.writes.perSecond, description: "default write (POST/PUT/DELETE) rate per project" },
  RATE_LIMIT_WRITES_BURST: { type: "integer", minimum: 1, maximum: 1_000_000, default: DEFAULT_LIMITS.writes.burst, description: "default write burst per project" },
  RATE_LIMIT_IMPORTS_PER_SECOND: { type: "number", minimum: 0.001, maximum: 100_000, default: DEFAULT_LIMITS.imports.perSecond, description: "default bulk import rate per project, in lines per second (docs/import.md)" },
  RATE_LIMIT_IMPORTS_BURST: { type: "integer", minimum: 1, maximum: 1_000_000, default: DEFAULT_LIMITS.imports.burst, description: "default bulk import burst per project, in lines" },
  RATE_LIMIT_KV_BUCKET: { type: "string", pattern: "^[A-Za-z0-9_-]+$", default: "ratelimit", description: "NATS KV bucket shared by the gateway replicas" },
} as const;

export interface RateLimitConfig {
  RATE_LIMIT_ENABLED: boolean;
  RATE_LIMIT_READS_PER_SECOND: number;
  RATE_LIMIT_READS_BURST: number;
  RATE_LIMIT_WRITES_PER_SECOND: number;
  RATE_LIMIT_WRITES_BURST: number;
  RATE_LIMIT_IMPORTS_PER_SECOND: number;
  RATE_LIMIT_IMPORTS_BURST: number;
  RATE_LIMIT_KV_BUCKET: string;
  NATS_URL?: string;
}

export function defaultLimitsOf(cfg: RateLimitConfig): ProjectLimits {
  return {
    reads: { perSecond: cfg.RATE_LIMIT_READS_PER_SECOND, burst: cfg.RATE_LIMIT_READS_BURST },
    writes: { perSecond: cfg.RATE_LIMIT_WRITES_PER_SECOND, burst: cfg.RATE_LIMIT_WRITES_BURST },
    imports: { perSecond: cfg.RATE_LIMIT_IMPORTS_PER_SECOND, burst: cfg.RATE_LIMIT_IMPORTS_BURST },
  };
}

