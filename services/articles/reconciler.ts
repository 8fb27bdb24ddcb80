// Re-queues articles that still wait for audio, so a lost publish or a worker
// that died mid-job never leaves an article stuck. The bus deduplicates by
// articleId:revision, so re-publishing a job that is in fact queued is harmless.
import type { JobBus } from "../../lib/bus/port.js";
import type { Logger } from "../../lib/log.js";
import { PENDING_STATUSES, type ArticleStore, type StaleArticle } from "./store/port.js";

export interface ReconcilerOptions {
  store: ArticleStore;
  bus: JobBus;
  log: Logger;
  /** Default 30 s. */
  intervalMs?: number;
  /** Only articles unchanged for this long are re-queued on the periodic runs; default 120 s. */
  staleMs?: number;
  batchSize?: number;
  /** Revisions never admitted (the process died before admission) go through admission instead of straight to the bus. */
  admit?: (a: StaleArticle) => Promise<unknown>;
  /** Articles created from their URL whose page was never read (the process died, or the fetch queue was full) are fetched again. */
  fetchPage?: (a: StaleArticle) => unknown;
}

export interface Reconciler {
  /** Resolves once the start-up pass is done; exposed for tests and logs. */
  readonly initialRun: Promise<number>;
  /** One pass over articles unchanged since `olderThan` (epoch ms); returns how many were re-published. */
  runOnce(olderThan: number): Promise<number>;
  stop(): Promise<void>;
}

/** Pending audio work, and articles whose page is still to be read (only those of them are due: store/due.ts). */
const DUE_STATUSES = [...PENDING_STATUSES, "recrawling"] as const;

/** Admissions at once in one pass: as many as the content pool has threads, plus slack for the quick ones. */
const ADMIT_LANES = 4;

export function startReconciler(opts: ReconcilerOptions): Reconciler {
  const intervalMs = opts.intervalMs ?? 30_000;
  const staleMs = opts.staleMs ?? 120_000;
  const batch = opts.batchSize ?? 500;
  let stopped = false;
  let running: Promise<unknown> = Promise.resolve();

  async function admitAll(pending: StaleArticle[]): Promise<void> {
    let next = 0;
    const lane = async () => {
      while (!stopped && next < pending.length) {
        const a = pending[next++];
        try {
          await opts.admit!(a);
        } catch (err) {
          opts.log.warn({ err, articleId: a.id }, "reconciler could not admit; will retry next pass");
        }
      }
    };
    await Promise.all(Array.from({ length: ADMIT_LANES }, lane));
  }

  async function runOnce(olderThan: number): Promise<number> {
    let published = 0;
    let after: { id: string; key: number } | undefined;
    while (!stopped) {
      const page = await opts.store.findStale(DUE_STATUSES, olderThan, { after, limit: batch });
      // Admissions run a few at a time beside the re-publishing: one article whose content takes
      // its full time limit must not hold up every other pending article behind it.
      const admissions = opts.admit ? admitAll(page.filter((a) => a.pendingAdmission)) : Promise.resolve();
      for (const a of page) {
        if (stopped) break;
        if (a.pendingAdmission && opts.admit) continue;
        // No text yet: a job would have nothing to read.
        if (a.pendingFetch) {
          opts.fetchPage?.(a);
          continue;
        }
        try {
          await opts.bus.publish({ articleId: a.id, projectId: a.projectId, revision: a.revision, ...(a.demanded ? { priority: true } : {}) });
          published++;
        } catch (err) {
          // The bus is down: the next pass tries again.
          opts.log.warn({ err, articleId: a.id }, "reconciler could not re-publish; will retry next pass");
          await admissions;
          return published;
        }
      }
      await admissions;
      if (page.length < batch) break;
      const last = page[page.length - 1];
      after = { id: last.id, key: last.key ?? 0 };
    }
    if (published > 0) opts.log.info({ published }, "reconciler re-queued pending articles");
    return published;
  }

  const guarded = (olderThan: number) => {
    const p = runOnce(olderThan).catch((err) => {
      opts.log.error({ err }, "reconciler pass failed");
      return 0;
    });
    running = p;
    return p;
  };

  // At start everything pending is suspect: whatever was in flight may have died with the previous process.
  const initialRun = guarded(Date.now() + 1);
  let busy = false;
  const timer = setInterval(() => {
    if (busy || stopped) return;
    busy = true;
    guarded(Date.now() - staleMs).finally(() => (busy = false));
  }, intervalMs);
  timer.unref();

  return {
    initialRun,
    runOnce,
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}
