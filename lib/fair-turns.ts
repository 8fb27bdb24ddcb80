// Turns on the event loop, fair between projects. A create's language detection
// is a few milliseconds of synchronous work (lib/lang-detect.ts); the 16 lines of
// an import call ran it back to back in one stretch of 30-60 ms on a loaded
// machine, and another project's create, whose store replies and RPC answers
// wait for the loop, paid such a stretch at each of its steps. Here such a step
// runs in a turn: the projects waiting are served round robin (lib/bus/fair-ring.ts,
// the order the gateway's lanes and audio jobs use; a project new to the ring
// first), steps run back to back only for a slice of a few milliseconds, and
// the event loop serves I/O before the next slice. So another project's create
// waits for a slice at most, not for a whole import call.
import { FairRing } from "./bus/fair-ring.js";

/** Runs `step` when `key`'s turn comes; resolves what it returns (rejects what it throws). */
export type FairTurn = <T>(key: string, step: () => T) => Promise<T>;

/** Steps run back to back for this long at most before the event loop has a pass (as lib/slices.ts). */
const SLICE_MS = 8;

export function fairTurns(sliceMs = SLICE_MS): FairTurn {
  const ring = new FairRing();
  const waiting = new Map<string, Array<() => void>>();
  /** A slice is planned for the next pass: steps asked for meanwhile wait for it. */
  let planned = false;

  function nextStep(): (() => void) | undefined {
    for (const key of ring.candidates()) {
      const queue = waiting.get(key);
      if (!queue?.length) {
        ring.idle(key);
        waiting.delete(key);
        continue;
      }
      ring.served(key);
      return queue.shift();
    }
    return undefined;
  }

  function slice(): void {
    planned = false;
    const until = performance.now() + sliceMs;
    for (;;) {
      const run = nextStep();
      if (!run) return;
      run();
      if (performance.now() >= until) break;
    }
    planned = true;
    setImmediate(slice);
  }

  return <T>(key: string, step: () => T) =>
    new Promise<T>((resolve, reject) => {
      const run = () => {
        try {
          resolve(step());
        } catch (e) {
          reject(e);
        }
      };
      if (!planned) {
        // Nobody waits: at once, so an idle service adds no delay; steps asked for in this same pass wait for the next.
        planned = true;
        setImmediate(slice);
        run();
        return;
      }
      let queue = waiting.get(key);
      if (!queue) waiting.set(key, (queue = []));
      queue.push(run);
      ring.activate(key);
    });
}

/** The process's turns: one event loop, one set of turns for every service it runs. */
export const eventLoopTurn: FairTurn = fairTurns();
