// Background admission work: deferred articles are retried periodically (and
// right after each UTC midnight, when daily counters start over), and the
// optional per-project recrawl runs on its own period.
import type { Logger } from "../../../lib/log.js";
import type { Admission } from "./admit.js";
import { periodicRecrawl, type RecrawlDeps } from "./recrawl.js";

export interface SchedulerOptions {
  admission: Admission;
  recrawl: RecrawlDeps;
  log: Logger;
  /** Retry of limit_reached / no_money articles (credit may have been added); default 30 s. */
  deferredEveryMs?: number;
  /** Periodic recrawl pass; default 5 min. 0 disables. */
  recrawlEveryMs?: number;
}

export interface Scheduler {
  stop(): Promise<void>;
}

export const msUntilNextUtcDay = (now = Date.now()) => 86_400_000 - (now % 86_400_000);

export function startAdmissionScheduler(opts: SchedulerOptions): Scheduler {
  const { admission, log } = opts;
  let stopped = false;
  const running = new Set<Promise<unknown>>();

  // One pass of each kind at a time: a slow pass is skipped over, never stacked.
  const guard = (name: string, fn: () => Promise<unknown>) => {
    let busy = false;
    return () => {
      if (busy || stopped) return;
      busy = true;
      const p = fn()
        .catch((err: unknown) => log.error({ err }, `${name} pass failed`))
        .finally(() => {
          busy = false;
          running.delete(p);
        });
      running.add(p);
    };
  };

  const sweep = guard("deferred admission", () => admission.readmitDeferred());
  const deferredTimer = setInterval(sweep, opts.deferredEveryMs ?? 30_000);
  deferredTimer.unref();

  let midnight: NodeJS.Timeout;
  const armMidnight = () => {
    // A second late, so every replica's clock agrees the day has turned.
    midnight = setTimeout(() => {
      sweep();
      armMidnight();
    }, msUntilNextUtcDay() + 1_000);
    midnight.unref();
  };
  armMidnight();

  const recrawlEvery = opts.recrawlEveryMs ?? 300_000;
  const recrawlTimer = recrawlEvery > 0 ? setInterval(guard("periodic recrawl", () => periodicRecrawl(opts.recrawl)), recrawlEvery) : undefined;
  recrawlTimer?.unref();

  return {
    async stop() {
      stopped = true;
      clearInterval(deferredTimer);
      clearTimeout(midnight);
      if (recrawlTimer) clearInterval(recrawlTimer);
      await Promise.all(running);
    },
  };
}
