export interface BackoffOptions {
  baseMs: number;
  maxMs: number;
  /** Longest Retry-After we honour; a server asking for more gets this. */
  retryAfterCapMs: number;
}

/**
 * Wait before retry number `attempt` (1 = first retry): full jitter over an exponentially
 * growing window, so workers that failed together do not come back together; a server's
 * Retry-After (capped) is the minimum.
 */
export function retryDelay(attempt: number, opts: BackoffOptions, retryAfterMs?: number, random = Math.random): number {
  const window = Math.min(opts.maxMs, opts.baseMs * 2 ** Math.max(0, attempt - 1));
  const jitter = Math.floor(random() * window);
  if (retryAfterMs === undefined) return jitter;
  return Math.max(Math.min(retryAfterMs, opts.retryAfterCapMs), jitter);
}

export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const done = () => {
      signal.removeEventListener("abort", stop);
      resolve();
    };
    const timer = setTimeout(done, ms);
    const stop = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener("abort", stop, { once: true });
  });
}
