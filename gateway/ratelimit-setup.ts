// Builds the gateway's rate limiting from its configuration: the NATS KV
// bucket store when NATS_URL is set (every replica shares the buckets), the
// in-memory one otherwise; the token lookup and the settings read both go to
// the auth service with the internal token.
import { AuthService } from "../gen/auth/v1/auth_pb.js";
import { ConfigError } from "../lib/config.js";
import type { Logger } from "../lib/log.js";
import { createRateLimiter } from "../lib/ratelimit/limiter.js";
import { createMemoryBucketStore } from "../lib/ratelimit/memory.js";
import type { BucketStore } from "../lib/ratelimit/port.js";
import { createCallerResolver } from "../lib/rpc/caller.js";
import { rpcClient } from "../lib/rpc/client.js";
import { DEFAULT_LIMITS, projectLimitsFromSettings, type ProjectLimits, type RateLimitMiddlewareOptions } from "./ratelimit.js";

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

export interface GatewayRateLimit {
  options: RateLimitMiddlewareOptions;
  close(): Promise<void>;
}

export function defaultLimitsOf(cfg: RateLimitConfig): ProjectLimits {
  return {
    reads: { perSecond: cfg.RATE_LIMIT_READS_PER_SECOND, burst: cfg.RATE_LIMIT_READS_BURST },
    writes: { perSecond: cfg.RATE_LIMIT_WRITES_PER_SECOND, burst: cfg.RATE_LIMIT_WRITES_BURST },
    imports: { perSecond: cfg.RATE_LIMIT_IMPORTS_PER_SECOND, burst: cfg.RATE_LIMIT_IMPORTS_BURST },
  };
}

/** Undefined when RATE_LIMIT_ENABLED=false. */
export async function gatewayRateLimit(cfg: RateLimitConfig, auth: { url?: string; internalToken?: string }, log: Logger): Promise<GatewayRateLimit | undefined> {
  if (!cfg.RATE_LIMIT_ENABLED) return undefined;
  if (!auth.url) throw new ConfigError("Invalid configuration: AUTH_URL is required for rate limits (or set RATE_LIMIT_ENABLED=false)");
  if (!auth.internalToken) throw new ConfigError("Invalid configuration: INTERNAL_TOKEN is required for rate limits (or set RATE_LIMIT_ENABLED=false)");
  let store: BucketStore;
  let shared = false;
  if (cfg.NATS_URL) {
    const { createNatsKvBucketStore } = await import("../lib/ratelimit/nats-kv.js");
    store = await createNatsKvBucketStore({ url: cfg.NATS_URL, bucket: cfg.RATE_LIMIT_KV_BUCKET });
    shared = true;
  } else {
    store = createMemoryBucketStore();
  }
  const client = rpcClient(AuthService, auth.url, { token: auth.internalToken, timeoutMs: 5_000 });
  let lastWarn = 0;
  const warn = (what: string) => (err: unknown) => {
    // One line per 10 s is enough to see a broken dependency without flooding the log.
    if (Date.now() - lastWarn < 10_000) return;
    lastWarn = Date.now();
    log.warn({ err: { message: (err as Error)?.message } }, what);
  };
  return {
    options: {
      resolveCaller: createCallerResolver({ auth: client, internalToken: auth.internalToken }),
      limitsOf: projectLimitsFromSettings({ auth: client, defaults: defaultLimitsOf(cfg), onError: warn("project rate limits unavailable, using the defaults") }),
      limiter: createRateLimiter({
        store,
        // A local store is exact at no cost; a shared one is leased in batches (lib/ratelimit/limiter.ts).
        leaseSize: shared ? undefined : () => 1,
        onStoreError: warn("rate-limit store unavailable, admitting requests"),
      }),
    },
    close: () => store.close(),
  };
}
