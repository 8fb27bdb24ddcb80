// A speech host whose parent is gone must go too, at once. The parent's death closes the IPC
// channel, but the host only hears of it between two model calls: a call holds its JavaScript
// thread for seconds. A small worker thread, which runs while the main thread is held, watches
// the parent process id and ends the whole process the moment the host is orphaned (SIGKILL of
// the service included, which gives the service no chance to stop it).
import { Worker } from "node:worker_threads";

const WATCH_MS = 100;

export function exitWithParent(): void {
  const parent = process.ppid;
  const watcher = new Worker(
    `const parent = ${parent};
     setInterval(() => { if (process.ppid !== parent) process.kill(${process.pid}, "SIGKILL"); }, ${WATCH_MS});`,
    { eval: true, resourceLimits: { maxOldGenerationSizeMb: 8, maxYoungGenerationSizeMb: 1 } },
  );
  // It never keeps the host alive by itself.
  watcher.unref();
}
