// The embedded default's bucket store: one process, one map. It passes the
// same contract suite as the NATS KV store (test/contract/ratelimit.test.ts).
import { takeFrom, type BucketPolicy, type BucketState, type BucketStore, type TakeResult } from "./port.js";

export interface MemoryBucketStoreOptions {
  now?: () => number;
  /** Buckets kept; the least recently used one goes first (an absent bucket is a full one). */
  maxKeys?: number;
}

export function createMemoryBucketStore(opts: MemoryBucketStoreOptions = {}): BucketStore {
  const now = opts.now ?? Date.now;
  const maxKeys = opts.maxKeys ?? 100_000;
  const buckets = new Map<string, BucketState>();
  const takeNow = (key: string, want: number, policy: BucketPolicy): TakeResult => {
    const t = now();
    const current = buckets.get(key) ?? null;
    const { next, result } = takeFrom(current, want, policy, t);
    // Re-inserting keeps the map ordered by last use for the eviction below.
    buckets.delete(key);
    buckets.set(key, next);
    if (buckets.size > maxKeys) buckets.delete(buckets.keys().next().value as string);
    return result;
  };
  return {
    takeNow,
    async take(key: string, want: number, policy: BucketPolicy): Promise<TakeResult> {
      return takeNow(key, want, policy);
    },
    async close() {
      buckets.clear();
    },
  };
}
