// Fair turns for the store work of every import on this gateway. Each project
// is a lane; the lanes with a CreateArticles call waiting are served round
// robin (lib/bus/fair-ring.ts, the order audio jobs use), at most `concurrency`
// calls in flight over all imports, and the event loop gets a turn between two
// calls. So four projects importing at once share the store's write capacity
// instead of queueing thousands of creates ahead of everyone's reads, and one
// project cannot take a larger share by opening more imports.
import { FairRing } from "../lib/bus/fair-ring.js";

export type ScheduleCall = <T>(call: () => Promise<T>) => Promise<T>;

export interface ImportLanes {
  /** The scheduler for one import of `project`: its calls wait for the project's turn. */
  lane(project: string): ScheduleCall;
  /** Calls running and waiting (for tests and metrics). */
  readonly pending: number;
}

type Waiting = () => void;

/** `concurrency`: CreateArticles calls of imports in flight at once, over the whole gateway (IMPORT_CALLS_IN_FLIGHT). */
export function importLanes(concurrency: number): ImportLanes {
  const ring = new FairRing();
  const queues = new Map<string, Waiting[]>();
  let running = 0;
  let waiting = 0;
  let pumpQueued = false;

  function pump(): void {
    pumpQueued = false;
    while (running < concurrency && waiting > 0) {
      let lane: string | undefined;
      for (const l of ring.candidates()) {
        if ((queues.get(l)?.length ?? 0) > 0) {
          lane = l;
          break;
        }
        // Left the rotation only once found empty at its turn: a project that just sent its next call keeps its place.
        ring.idle(l);
        queues.delete(l);
      }
      if (lane === undefined) return;
      const start = queues.get(lane)!.shift()!;
      waiting--;
      ring.served(lane);
      running++;
      start();
    }
  }

  /** The next call starts after the event loop has served what waits (a read, a probe). */
  const pumpSoon = () => {
    if (pumpQueued) return;
    pumpQueued = true;
    setImmediate(pump);
  };

  return {
    get pending() {
      return running + waiting;
    },
    lane(project) {
      return <T>(call: () => Promise<T>) =>
        new Promise<T>((resolve, reject) => {
          const start = () => {
            call()
              .then(resolve, reject)
              .finally(() => {
                running--;
                pumpSoon();
              });
          };
          const queue = queues.get(project) ?? [];
          queue.push(start);
          queues.set(project, queue);
          waiting++;
          ring.activate(project);
          pump();
        });
    },
  };
}
