// Batch work in worker threads (speech synthesis) runs below the requests
// the service answers on its main thread. On Linux a thread has a nice value
// of its own, and setpriority(PRIO_PROCESS, 0) changes only the calling one,
// so a worker can lower itself without lowering the process; the programs it
// spawns inherit the value. Elsewhere the call would lower the whole process,
// so it is left out.
import { setPriority } from "node:os";
import { isMainThread } from "node:worker_threads";

/** Lowers the calling worker thread to `niceness`; answers whether it did. */
export function lowerThisWorkerThread(niceness: number): boolean {
  if (isMainThread || process.platform !== "linux") return false;
  try {
    setPriority(0, niceness);
    return true;
  } catch {
    // Not permitted here (a sandbox refusing setpriority): the thread keeps the service's priority.
    return false;
  }
}
