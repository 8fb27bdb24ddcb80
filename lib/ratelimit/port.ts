// Token buckets shared by every gateway replica. The store holds the
// authoritative bucket per key; gateways lease tokens from it in small
// batches (limiter.ts), so most requests never touch the store.

export interface BucketPolicy {
  /** Tokens added per second. */
  perSecond: number;
  /** Bucket size: the most requests accepted at once after a quiet spell. */
  burst: number;
}

export interface TakeResult {
  /** Tokens handed out, 0..want. */
  granted: number;
  /** Whole tokens left in the shared bucket after this take. */
  remaining: number;
  /** When nothing was granted: ms until one token is available. */
  retryAfterMs: number;
  /** ms until the bucket is full again (0 when it is). */
  fullInMs: number;
}

export interface BucketStore {
  /** Atomically refills bucket `key` by the time elapsed and takes up to `want` tokens. */
  take(key: string, want: number, policy: BucketPolicy): Promise<TakeResult>;
  /** The same take answered at once, by a store that lives in this process (no promise per request on the hot path). */
  takeNow?(key: string, want: number, policy: BucketPolicy): TakeResult;
  close(): Promise<void>;
}

/** What a bucket looks like between takes: its level at a moment. */
export interface BucketState {
  tokens: number;
  /** ms since the epoch, the writer's clock. */
  at: number;
}

/**
 * The one refill-and-take rule every store applies, so a memory bucket and a
 * KV bucket answer the same sequence of takes identically. A clock that went
 * backwards (another replica's) adds nothing rather than taking tokens back.
 */
export function takeFrom(state: BucketState | null, want: number, policy: BucketPolicy, now: number): { next: BucketState; result: TakeResult } {
  const elapsed = state ? Math.max(0, now - state.at) : 0;
  const level = state ? Math.min(policy.burst, state.tokens + (elapsed * policy.perSecond) / 1000) : policy.burst;
  const granted = Math.max(0, Math.min(Math.floor(want), Math.floor(level)));
  const tokens = level - granted;
  const next = { tokens, at: state ? Math.max(now, state.at) : now };
  return {
    next,
    result: {
      granted,
      remaining: Math.floor(tokens),
      retryAfterMs: granted > 0 ? 0 : msFor(1 - tokens, policy),
      fullInMs: msFor(policy.burst - tokens, policy),
    },
  };
}

/** Time for n tokens to come in. Not a closure inside takeFrom: that was one function object per request. */
const msFor = (n: number, policy: BucketPolicy): number => (n <= 0 ? 0 : Math.ceil((n * 1000) / policy.perSecond));
