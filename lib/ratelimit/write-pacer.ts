// Paces work done on a project's behalf in the background (bulk jobs) through
// the project's writes bucket: the same bucket, under the same key, that the
// gateway counts the project's API writes in, so a job goes no faster than its
// project may write. It leaves a quarter of the burst in the bucket, so the
// editor's own writes during a job are still answered rather than refused.
import { createRateLimiter, type RateLimiter } from "./limiter.js";
import type { BucketPolicy, BucketStore } from "./port.js";
import { projectBucketKey } from "./project-limits.js";

/** Resolves once the project may make one more write; rejects with the signal's reason when aborted. */
export type WritePacer = (projectId: string, signal?: AbortSignal) => Promise<void>;

export interface WritePacerOptions {
  /** The store the gateway's limiter takes from (memory: the very same object; NATS KV: the same bucket). */
  store: BucketStore;
  /** The project's writes policy (its settings over the deployment's defaults). */
  policyOf(projectId: string): Promise<BucketPolicy>;
  /** A store shared across processes is leased in batches like the gateway's; a local one exactly. */
  shared?: boolean;
}

/** Resolves after ms, or at once when the signal aborts (the caller checks it). */
export function pause(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
  });
}

export function createWritePacer(opts: WritePacerOptions): WritePacer {
  const limiter: RateLimiter = createRateLimiter({ store: opts.store, leaseSize: opts.shared ? undefined : () => 1 });
  return async (projectId, signal) => {
    const key = projectBucketKey(projectId, "writes");
    for (;;) {
      signal?.throwIfAborted();
      const policy = await opts.policyOf(projectId);
      const d = limiter.takeNow(key, policy) ?? (await limiter.take(key, policy));
      if (!d.allowed) {
        await pause(d.retryAfterMs, signal);
        continue;
      }
      // Below the reserve: the next take waits until the bucket has refilled to it.
      const reserve = Math.ceil(policy.burst / 4);
      if (d.remaining < reserve) await pause(((reserve - d.remaining) * 1000) / policy.perSecond, signal);
      signal?.throwIfAborted();
      return;
    }
  };
}
