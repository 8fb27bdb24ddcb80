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
import { projectLimitsFromSettings, type RateLimitMiddlewareOptions } from "./ratelimit.js";
import { defaultLimitsOf, type RateLimitConfig } from "../lib/ratelimit/project-limits.js";

export { RATE_LIMIT_VARS, defaultLimitsOf, type RateLimitConfig } from "../lib/ratelimit/project-limits.js";

export interface GatewayRateLimit {
  options: RateLimitMiddlewareOptions;
  /** Where the buckets live, for work paced through the same writes bucket in this process (bulk jobs, lib/ratelimit/write-pacer.ts). */
  store: BucketStore;
  shared: boolean;
  close(): Promise<void>;
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
    store,
    shared,
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
