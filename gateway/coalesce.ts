// Identical reads that arrive while the same read is already in flight wait
// for its answer instead of making their own upstream call. Only in-flight
// work is shared: the entry is dropped the moment the answer (or error)
// arrives, so nothing is ever served from a cache, and a token revoked in the
// meantime is refused by the next call as usual. The key carries the
// caller's credential, so two callers never share an answer unless they sent
// the very same credential and the very same request. It is the raw header,
// not a digest: an entry lives exactly as long as the request that holds the
// same header anyway, and hashing it cost 3% of a read.
//
// The upstream call starts one event-loop turn late (setImmediate): requests
// that arrived in the same batch of socket reads join it. Without that turn
// an upstream that answers from memory (the services of the embedded default
// run in-process) could finish before the next identical request is even
// parsed, and nothing would ever be shared. The answer is still computed
// after every joined request arrived, so none gets older data than it asked for.
//
// All reads of one turn share a single setImmediate. Their upstream calls then
// advance together through the same microtask queue, and their answers leave
// back to back instead of one per immediate callback. On a loopback socket the
// writer pays for waking the reader; answers written microseconds apart find
// the client still awake (GET by id: writev 32% -> 18% of the main thread).

import { held, type Held } from "../lib/held.js";

export interface Coalescer<T> {
  /** Runs `produce` unless an identical call is in flight, then shares its outcome. */
  run(key: string, produce: () => Promise<T>): Promise<T>;
  /** Calls in flight right now (for tests and metrics). */
  readonly size: number;
}

/**
 * @param maxInFlight beyond this many distinct keys in flight, new calls run
 *   on their own: the map stays bounded whatever the traffic.
 */
export function createCoalescer<T>(maxInFlight = 1_000): Coalescer<T> {
  // A promise holds the requests waiting for it: entries let go of it once it settles (lib/held.ts).
  const inflight = new Map<string, Held<Promise<T>>>();
  return {
    run(key, produce) {
      const shared = inflight.get(key)?.value;
      if (shared) return shared;
      if (inflight.size >= maxInFlight) return produce();
      const p = nextTurn().then(produce);
      const entry = held(p);
      inflight.set(key, entry);
      // Method shorthand: a `const drop = () =>` would pay tsx's __name() on every read.
      const { drop } = {
        drop(): void {
          entry.value = undefined;
          if (inflight.get(key) === entry) inflight.delete(key);
        },
      };
      p.then(drop, drop);
      return p;
    },
    get size() {
      return inflight.size;
    },
  };
}

let turn: Promise<void> | undefined;
/**
 * Resolves in the shared next turn. Answers that need no upstream call (the
 * player's beacons) wait for it too, so they leave back to back with the
 * others of their batch instead of one socket write and client wake-up each.
 */
export function nextTurn(): Promise<void> {
  return (turn ??= new Promise((resolve) =>
    setImmediate(() => {
      turn = undefined;
      resolve();
    }),
  ));
}
