// Processes below a given one (Linux /proc): the speech host, eSpeak and LAME below a service, for
// the engine's tests and the benches' memory figures.
import { readdirSync, readFileSync } from "node:fs";

export interface ProcessInfo {
  pid: number;
  ppid: number;
  /** The kernel's name for it: "espeak-ng", "lame"; Node is "node" on Node 20 and "MainThread" on 24. */
  comm: string;
  nice: number;
}

/** A live process (not a zombie waiting to be reaped), or undefined. */
export function processInfo(pid: number): ProcessInfo | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return undefined; // gone
  }
  // pid (comm) state ppid, 14 more fields, nice; comm may hold spaces and parentheses.
  const m = /^\d+ \((.*)\) (\S) (\d+)(?: \S+){14} (-?\d+)/s.exec(stat);
  if (!m || m[2] === "Z") return undefined;
  return { pid, ppid: Number(m[3]), comm: m[1], nice: Number(m[4]) };
}

/** The pids `pid` started (any of its threads), live or not yet reaped. */
export function childrenOf(pid: number): number[] {
  const found: number[] = [];
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return found; // gone
  }
  for (const task of tasks) {
    try {
      for (const child of readFileSync(`/proc/${pid}/task/${task}/children`, "utf8").split(" ")) if (child.trim()) found.push(Number(child));
    } catch {
      // the thread is gone
    }
  }
  return found;
}

/** Live processes below `root`, at any depth. */
export function descendantsOf(root: number): ProcessInfo[] {
  const pids = childrenOf(root);
  for (let i = 0; i < pids.length; i++) pids.push(...childrenOf(pids[i]));
  return pids.map(processInfo).filter((p): p is ProcessInfo => p !== undefined);
}
