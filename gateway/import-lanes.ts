// Fair turns for the store work of the gateway's creates: every import's
// CreateArticles calls and the single creates (POST /api/articles, a call per
// batch of one token's creates, create-batch.ts). Each project is a lane; the
// lanes with a call waiting are served round robin (lib/bus/fair-ring.ts, the
// order audio jobs use), and the event loop gets a turn between two import
// calls. So four projects importing at once share the store's write capacity
// instead of queueing thousands of creates ahead of everyone's reads, one
// project cannot take a larger share by opening more imports, and a single
// create never queues behind an import: a project that just sent one is served
// next (a lane new to the ring goes first), its own creates go before its own
// imports' next call, and imports in flight hold no place a create needs.
//
// Two bounds over the whole gateway: `concurrency` import calls in flight
// (IMPORT_CALLS_IN_FLIGHT; an import's calls are 16 creates each and run on the
// event loop everyone shares on the embedded default), and `createConcurrency`
// single-create calls (a bound, not a pace: creates have their project's write
// limit, and a batch gathers its token's creates that arrive meanwhile).
import { FairRing } from "../lib/bus/fair-ring.js";
import { bearerTokenOf, type CallerResolver } from "../lib/rpc/caller.js";

export type ScheduleCall = <T>(call: () => Promise<T>) => Promise<T>;

export interface ImportLanes {
  /** The scheduler for one import of `project`: its calls wait for the project's turn. */
  lane(project: string): ScheduleCall;
  /** The scheduler for single creates of `project`: their calls wait for the project's turn, never for an import's. */
  createLane(project: string): ScheduleCall;
  /** Calls running and waiting (for tests and metrics). */
  readonly pending: number;
}

/** Single-create calls in flight at once over the gateway, by default. */
export const DEFAULT_CREATE_CALLS_IN_FLIGHT = 8;

type Waiting = () => void;

interface Lane {
  imports: Waiting[];
  creates: Waiting[];
}

/** The key of a token's lane: its project, or the token itself when no auth service is there to say. */
export async function laneKeyOf(authorization: string, callers: CallerResolver | undefined): Promise<string> {
  const caller = callers ? await callers(new Headers({ authorization })) : undefined;
  return caller?.kind === "publisher" ? `project:${caller.projectId}` : `token:${bearerTokenOf(authorization)}`;
}

/** `concurrency`: import calls in flight at once, over the whole gateway (IMPORT_CALLS_IN_FLIGHT). */
export function importLanes(concurrency: number, createConcurrency = DEFAULT_CREATE_CALLS_IN_FLIGHT): ImportLanes {
  const ring = new FairRing();
  const lanes = new Map<string, Lane>();
  const running = { imports: 0, creates: 0 };
  let waiting = 0;
  let pumpQueued = false;

  /** What `lane` may start now: a create first, then an import; undefined when its calls must wait. */
  function next(lane: Lane): Waiting | undefined {
    if (lane.creates.length > 0 && running.creates < createConcurrency) {
      running.creates++;
      return lane.creates.shift();
    }
    if (lane.imports.length > 0 && running.imports < concurrency) {
      running.imports++;
      return lane.imports.shift();
    }
    return undefined;
  }

  function pump(): void {
    pumpQueued = false;
    for (;;) {
      if (waiting === 0) return;
      let start: Waiting | undefined;
      for (const key of ring.candidates()) {
        const lane = lanes.get(key);
        if (!lane || lane.imports.length + lane.creates.length === 0) {
          // Left the rotation only once found empty at its turn: a project that just sent its next call keeps its place.
          ring.idle(key);
          lanes.delete(key);
          continue;
        }
        // A lane whose calls must wait for a bound keeps its place for when they may go.
        start = next(lane);
        if (start) {
          ring.served(key);
          break;
        }
      }
      if (!start) return;
      waiting--;
      start();
    }
  }

  /** The next import call starts after the event loop has served what waits (a read, a probe). */
  const pumpSoon = () => {
    if (pumpQueued) return;
    pumpQueued = true;
    setImmediate(pump);
  };

  function schedule(project: string, kind: keyof Lane): ScheduleCall {
    return <T>(call: () => Promise<T>) =>
      new Promise<T>((resolve, reject) => {
        const start = () => {
          let p: Promise<T>;
          try {
            p = call();
          } catch (e) {
            p = Promise.reject(e);
          }
          p.then(resolve, reject)
            .finally(() => {
              running[kind]--;
              // A create's place is given at once; an import's after a turn of the event loop.
              if (kind === "creates") pump();
              else pumpSoon();
            });
        };
        let lane = lanes.get(project);
        if (!lane) lanes.set(project, (lane = { imports: [], creates: [] }));
        lane[kind].push(start);
        waiting++;
        ring.activate(project);
        pump();
      });
  }

  return {
    get pending() {
      return running.imports + running.creates + waiting;
    },
    lane: (project) => schedule(project, "imports"),
    createLane: (project) => schedule(project, "creates"),
  };
}
