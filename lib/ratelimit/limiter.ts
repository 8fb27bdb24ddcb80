// Per-key rate limiting over a shared bucket store without a store round trip
// per request: a replica leases a few tokens at a time from the shared bucket
// and spends them locally, and remembers a refusal until the bucket refills.
//
// Why the limit holds across replicas: every admitted request spends a token
// that was taken from the shared bucket by compare-and-set, so all replicas
// together admit at most burst + perSecond × t in any span t. The cost is on
// the other side: tokens leased by one replica are not usable by another, so
// a project can be refused up to (replicas − 1) × lease tokens early; leases
// lapse after leaseTtlMs so stranded tokens do not linger.
import type { BucketPolicy, BucketStore, TakeResult } from "./port.js";

export interface Decision {
  allowed: boolean;
  /** Tokens this project still has (shared bucket + this replica's lease); approximate across replicas. */
  remaining: number;
  /** When refused: ms until a retry can succeed. */
  retryAfterMs: number;
  /** ms until the bucket is full again, as last seen. */
  fullInMs: number;
}

export interface RateLimiter {
  take(key: string, policy: BucketPolicy): Promise<Decision>;
  /**
   * The same decision when it needs no wait: a leased token, a refusal still
   * remembered, or a store in this process. Undefined: call take().
   */
  takeNow(key: string, policy: BucketPolicy): Decision | undefined;
}

export interface RateLimiterOptions {
  store: BucketStore;
  /**
   * Tokens taken from the store at a time. The default, one tenth of a
   * second's worth (at least 1, at most a tenth of the burst), keeps the
   * store at ≤ ~10 round trips per second per busy key and replica. The
   * in-memory store wants 1: leasing buys nothing there.
   */
  leaseSize?: (p: BucketPolicy) => number;
  /** Unspent leased tokens are dropped after this. */
  leaseTtlMs?: number;
  /** Store failures: admit (fail open) and report here. */
  onStoreError?: (err: unknown) => void;
  /** After a failure the store is left alone this long (admitting meanwhile). */
  storeRestMs?: number;
  now?: () => number;
  maxKeys?: number;
}

interface Local {
  perSecond: number;
  burst: number;
  leased: number;
  leaseExpires: number;
  deniedUntil: number;
  sharedRemaining: number;
  fullAt: number;
  waiting: number;
  pending?: Promise<void>;
}

export const defaultLeaseSize = (p: BucketPolicy): number => Math.max(1, Math.min(Math.floor(p.perSecond / 10), Math.floor(p.burst / 10)));

export function createRateLimiter(opts: RateLimiterOptions): RateLimiter {
  const now = opts.now ?? Date.now;
  const leaseSize = opts.leaseSize ?? defaultLeaseSize;
  const leaseTtlMs = opts.leaseTtlMs ?? 1_000;
  const maxKeys = opts.maxKeys ?? 100_000;
  const locals = new Map<string, Local>();
  // After a store failure, admit without asking it for a while: one slow failure per key and second would still add latency.
  const storeRestMs = opts.storeRestMs ?? 5_000;
  let storeDownUntil = 0;

  function localOf(key: string, policy: BucketPolicy): Local {
    let l = locals.get(key);
    // A changed policy starts over: a lease under the old one may be too generous.
    if (!l || l.perSecond !== policy.perSecond || l.burst !== policy.burst) {
      l = { perSecond: policy.perSecond, burst: policy.burst, leased: 0, leaseExpires: 0, deniedUntil: 0, sharedRemaining: policy.burst, fullAt: 0, waiting: 0 };
      locals.set(key, l);
      if (locals.size > maxKeys) locals.delete(locals.keys().next().value as string);
    }
    return l;
  }

  const decision = (l: Local, t: number, allowed: boolean): Decision => ({
    allowed,
    remaining: allowed ? l.leased + l.sharedRemaining : 0,
    retryAfterMs: allowed ? 0 : Math.max(1, l.deniedUntil - t),
    fullInMs: Math.max(0, l.fullAt - t),
  });

  /** A lease from the store goes into the key's local state. */
  function leased(l: Local, r: TakeResult): void {
    const t = now();
    l.leased += r.granted;
    l.leaseExpires = t + leaseTtlMs;
    l.sharedRemaining = r.remaining;
    l.fullAt = t + r.fullInMs;
    if (r.granted === 0) l.deniedUntil = t + r.retryAfterMs;
  }

  /** Everyone queued behind this lease gets served by it when the bucket allows. */
  const wanted = (l: Local, policy: BucketPolicy) => Math.min(policy.burst, Math.max(leaseSize(policy), l.waiting + 1));

  async function refill(key: string, l: Local, policy: BucketPolicy): Promise<void> {
    const want = wanted(l, policy);
    if (now() < storeDownUntil) {
      l.leased += want;
      l.leaseExpires = now() + leaseTtlMs;
      return;
    }
    try {
      leased(l, await opts.store.take(key, want, policy));
    } catch (err) {
      opts.onStoreError?.(err);
      storeDownUntil = now() + storeRestMs;
      // Fail open for a moment rather than refusing every project's traffic.
      l.leased += want;
      l.leaseExpires = now() + leaseTtlMs;
    }
  }

  /** One round of take() without waiting; undefined when only the store (asynchronously) can say. */
  function decideNow(key: string, l: Local, policy: BucketPolicy): Decision | undefined {
    const t = now();
    if (l.leased > 0 && t >= l.leaseExpires) l.leased = 0;
    if (l.leased >= 1) {
      l.leased -= 1;
      return decision(l, t, true);
    }
    if (t < l.deniedUntil) return decision(l, t, false);
    // A store in this process answers at once; nobody can be queued on a pending lease then.
    if (!opts.store.takeNow || l.pending) return undefined;
    const want = wanted(l, policy);
    try {
      leased(l, opts.store.takeNow(key, want, policy));
    } catch (err) {
      // As refill(): admit rather than refuse every project's traffic.
      opts.onStoreError?.(err);
      l.leased += want;
      l.leaseExpires = t + leaseTtlMs;
    }
    if (l.leased < 1) return decision(l, now(), false);
    l.leased -= 1;
    return decision(l, now(), true);
  }

  return {
    takeNow(key, policy) {
      return decideNow(key, localOf(key, policy), policy);
    },
    async take(key, policy) {
      const l = localOf(key, policy);
      for (let round = 0; ; round++) {
        const decided = decideNow(key, l, policy);
        if (decided) return decided;
        // Outrun by others queued on the same key several times: the bucket is as good as empty.
        if (round >= 5) return { ...decision(l, now(), false), retryAfterMs: Math.ceil(1000 / policy.perSecond) };
        if (!l.pending) {
          l.pending = refill(key, l, policy).finally(() => {
            l.pending = undefined;
          });
        }
        l.waiting++;
        try {
          await l.pending;
        } finally {
          l.waiting--;
        }
      }
    },
  };
}
