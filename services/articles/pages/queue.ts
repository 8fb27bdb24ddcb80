// Page fetches of articles created from their URL run in the background,
// bounded: at most `overall` at once in this process and `perProject` for any
// one project, the waiting ones taken from the projects in turn (FairRing),
// so one project's import of a thousand URLs neither stalls another project's
// single one nor opens a thousand connections. What does not fit in the
// queue stays stored `recrawling` and due: the reconciler hands it back later.
import { FairRing } from "../../../lib/bus/fair-ring.js";

export interface PageQueueLimits {
  /** Fetches in flight in this process. */
  overall: number;
  /** Fetches in flight for one project. */
  perProject: number;
  /** Waiting fetches over all projects; more are left to the reconciler. */
  maxQueued: number;
}

export const PAGE_QUEUE_DEFAULTS: PageQueueLimits = { overall: 8, perProject: 2, maxQueued: 10_000 };

export interface PageQueue {
  /** Queues the article's fetch; false when it is queued or running already, or the queue is full. */
  add(projectId: string, id: string): boolean;
  /** Fetches running now (tests, metrics). */
  readonly running: number;
  /** Waits for the fetches in flight; queued ones are dropped (the reconciler has them). */
  close(): Promise<void>;
}

export function createPageQueue(run: (id: string) => Promise<unknown>, limits: PageQueueLimits = PAGE_QUEUE_DEFAULTS): PageQueue {
  const waiting = new Map<string, string[]>();
  const running = new Map<string, number>();
  const known = new Set<string>();
  const inFlight = new Set<Promise<unknown>>();
  const ring = new FairRing();
  let queued = 0;
  let active = 0;
  let closed = false;

  function pump(): void {
    while (!closed && active < limits.overall && queued > 0) {
      let started = false;
      for (const projectId of ring.candidates()) {
        const list = waiting.get(projectId);
        if (!list?.length) {
          ring.idle(projectId);
          continue;
        }
        if ((running.get(projectId) ?? 0) >= limits.perProject) continue;
        start(projectId, list.shift()!);
        if (list.length === 0) waiting.delete(projectId);
        ring.served(projectId);
        started = true;
        break;
      }
      // Every project with work waiting is at its own bound.
      if (!started) return;
    }
  }

  function start(projectId: string, id: string): void {
    queued--;
    active++;
    running.set(projectId, (running.get(projectId) ?? 0) + 1);
    const p = run(id)
      .catch(() => undefined)
      .finally(() => {
        active--;
        const n = (running.get(projectId) ?? 1) - 1;
        if (n === 0) running.delete(projectId);
        else running.set(projectId, n);
        known.delete(id);
        inFlight.delete(p);
        if (waiting.has(projectId)) ring.activate(projectId);
        pump();
      });
    inFlight.add(p);
  }

  return {
    add(projectId, id) {
      if (closed || known.has(id) || queued >= limits.maxQueued) return false;
      known.add(id);
      queued++;
      const list = waiting.get(projectId);
      if (list) list.push(id);
      else waiting.set(projectId, [id]);
      ring.activate(projectId);
      pump();
      return true;
    },
    get running() {
      return active;
    },
    async close() {
      closed = true;
      waiting.clear();
      queued = 0;
      await Promise.all([...inFlight]);
    },
  };
}

/** The bounds as configuration (README's table; docs/sources.md). */
export const PAGE_FETCH_VARS = {
  PAGE_FETCHES: { type: "integer", minimum: 1, maximum: 1000, default: PAGE_QUEUE_DEFAULTS.overall, description: "page fetches of articles created from a URL that one articles process runs at once" },
  PAGE_FETCHES_PER_PROJECT: { type: "integer", minimum: 1, maximum: 1000, default: PAGE_QUEUE_DEFAULTS.perProject, description: "page fetches one project may have running at once in one articles process" },
} as const;

export function pageQueueLimits(cfg: { PAGE_FETCHES: number; PAGE_FETCHES_PER_PROJECT: number }): PageQueueLimits {
  return { ...PAGE_QUEUE_DEFAULTS, overall: cfg.PAGE_FETCHES, perProject: Math.min(cfg.PAGE_FETCHES_PER_PROJECT, cfg.PAGE_FETCHES) };
}
