// The heap in use after a full collection, for tests that bound what a
// structure holds. Mocha runs without --expose-gc; V8 accepts the flag at run
// time, and a new context created after that gets its `gc` function.
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

/** Bytes of heap in use once everything unreachable is collected. */
export function collectedHeapBytes(): number {
  // Twice: the first collection may leave objects only a weak callback let go of.
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}
