// A speech host's CPU priority below the service's, where the kernel weighs it. Linux keeps a nice
// value per thread, and setpriority() on process 0 changes the calling thread's only: the threads
// Node started before (V8's platform workers, libuv's pool, the orphan watch) kept the service's
// priority. And where the kernel shares the CPU out by session first (autogroups: on when no CPU
// cgroup decides, as on most desktops, this project's development machine and many CI runners), a
// host in a session of its own (the service starts it detached) is a group of its own, weighed
// equal to the service's whole group whatever its threads' nice values: Kokoro busy on both cores
// then held the service's requests to about half the CPU and made each wake-up wait its turn
// (issue 34: creates p99 40 ms beside Kokoro against 18 ms idle). A group's own nice value is
// what the kernel weighs there, so the host's group gets the same distance below the service's.
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { setPriority } from "node:os";

/** What was lowered. */
export interface Lowered {
  /** Threads set to the niceness. */
  threads: number;
  /** The host's autogroup's nice value, when it has a group of its own to set. */
  autogroup?: number;
}

const AUTOGROUP_NICE = /nice\s+(-?\d+)/;

/**
 * Lowers this process (a speech host) to `niceness`, and its own autogroup that far below its
 * parent's; what is not permitted here stays as it was.
 */
export function runBelowService(niceness: number): Lowered {
  const lowered: Lowered = { threads: 0 };
  let threads: number[] = [];
  try {
    threads = readdirSync("/proc/self/task").map(Number).filter(Number.isInteger);
  } catch {
    // Not Linux: the process's priority is one value.
  }
  if (threads.length === 0) threads = [0];
  for (const tid of threads) {
    try {
      setPriority(tid, niceness);
      lowered.threads++;
    } catch {
      // Gone meanwhile, or not permitted: that thread runs at its priority as before.
    }
  }
  try {
    // Only a group of the host's own: one shared with the service would lower the service too.
    if (sessionLeader()) {
      const parent = Number(AUTOGROUP_NICE.exec(readFileSync(`/proc/${process.ppid}/autogroup`, "utf8"))?.[1] ?? 0);
      const nice = Math.min(19, Math.max(niceness, parent + niceness));
      writeFileSync("/proc/self/autogroup", String(nice));
      lowered.autogroup = nice;
    }
  } catch {
    // No autogroups here (another kernel, or a CPU cgroup decides instead): the threads' values count.
  }
  return lowered;
}

/** Whether this process started its session (a new session is a new autogroup). */
function sessionLeader(): boolean {
  const stat = readFileSync("/proc/self/stat", "utf8");
  // pid (comm) state ppid pgrp session …
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return Number(fields[3]) === process.pid;
}
