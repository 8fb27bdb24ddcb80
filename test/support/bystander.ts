// A bystander's latency while someone else's work runs, held against the same bystander's latency
// measured just before in the same test. A fixed figure ("p99 under 100 ms") fails on a loaded
// 2-core machine without any fault in the code; a stall of the event loop (what these tests guard
// against) shows as latency many times the bystander's own, on a loaded machine as on an idle one.
// Speed targets themselves live in `npm run bench`.
import { expect } from "chai";

export const percentile = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
};

export interface Latencies {
  n: number;
  p50: number;
  p99: number;
  max: number;
}

export const summarize = (latencies: number[]): Latencies => ({
  n: latencies.length,
  p50: percentile(latencies, 50),
  p99: percentile(latencies, 99),
  max: Math.max(...latencies),
});

export const describeLatencies = (r: Latencies): string => `${r.n} reads, p50 ${r.p50.toFixed(1)} ms, p99 ${r.p99.toFixed(1)} ms, max ${r.max.toFixed(1)} ms`;

/**
 * Calls `read` every `everyMs` until `stop`. Each call's latency counts from when it was due, not
 * from when it was sent: a client sharing the event loop it measures is held back by a stall as
 * long as a reader elsewhere would be.
 */
export function readEvery(read: () => Promise<unknown>, everyMs = 50) {
  const latencies: number[] = [];
  const inFlight: Promise<void>[] = [];
  const started = performance.now();
  let due = 0;
  const one = async (at: number) => {
    await read();
    latencies.push(performance.now() - at);
  };
  const timer = setInterval(() => {
    for (let at = started + due * everyMs; at <= performance.now(); at = started + ++due * everyMs) inFlight.push(one(at));
  }, 5);
  return {
    /** Stops after reading for `windowMs` from the start at least, and waits for the reads in flight. */
    async stop(windowMs = 0): Promise<Latencies> {
      const left = started + windowMs - performance.now();
      if (left > 0) await new Promise((res) => setTimeout(res, left));
      clearInterval(timer);
      await Promise.all(inFlight);
      return summarize(latencies);
    },
  };
}

/**
 * The most a bystander's latency may reach under another's load: ten times its own reference, and
 * never less than the reference plus a second (the stalls guarded against lasted seconds; a
 * CPU-starved machine stretches ordinary latency by tens or hundreds of milliseconds).
 */
export function stallAllowance(referenceMs: number, { factor = 10, slackMs = 1_000 } = {}): number {
  return Math.max(referenceMs * factor, referenceMs + slackMs);
}

/** Fails when `underLoadMs` is a stall next to `referenceMs`, naming both. */
export function expectNoStall(what: string, underLoadMs: number, referenceMs: number, options?: { factor?: number; slackMs?: number }): void {
  const allowed = stallAllowance(referenceMs, options);
  expect(underLoadMs, `${what}: ${underLoadMs.toFixed(0)} ms under load against ${referenceMs.toFixed(0)} ms alone (allowed ${allowed.toFixed(0)} ms)`).to.be.below(allowed);
}

/** Milliseconds `work` takes: a reference measured in the same test, for bounds that scale with the machine's load. */
export async function timed(work: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await work();
  return performance.now() - started;
}
