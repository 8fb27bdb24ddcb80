// Runs the polls: every articles replica scans for due sources each tick and
// takes each one's lease before polling it (store.ts: one conditional
// write), so a source is polled by exactly one replica however many run. A
// poll now and the first poll of a new source take the same path without
// waiting for the tick.
import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import type { Logger } from "../../../lib/log.js";
import { pollSource, type PollDeps } from "./poll.js";
import type { SourceDoc, SourceStore } from "./port.js";

export interface PollerOptions {
  store: SourceStore;
  poll: PollDeps;
  log: Logger;
  /** How often due sources are looked for; default 1 s (one indexed query). */
  tickMs?: number;
  /** How long a poll may hold its source before another replica may take it over; default 10 min. */
  leaseMs?: number;
  /** Polls running at once in this replica; default 4. */
  concurrency?: number;
}

export interface SourcePoller {
  /** Look for due sources now (one was added). */
  wake(): void;
  /** Polls the source now unless a poll of it is running anywhere; answers it as it is afterwards. */
  pollNow(projectId: string, id: string): Promise<SourceDoc | null>;
  close(): Promise<void>;
}

export function startSourcePoller(opts: PollerOptions): SourcePoller {
  const { store, log } = opts;
  const owner = `${hostname()}:${process.pid}:${randomBytes(4).toString("hex")}`;
  const leaseMs = opts.leaseMs ?? 600_000;
  const concurrency = opts.concurrency ?? 4;
  const running = new Map<string, Promise<SourceDoc | null>>();
  let closed = false;
  let scanning = false;
  let again = false;

  function run(src: SourceDoc): Promise<SourceDoc | null> {
    const p = (async () => {
      const outcome = await pollSource(opts.poll, src);
      return store.release(src._id, owner, outcome);
    })()
      .catch((err: unknown) => {
        // The lease runs out and another pass takes the source again.
        log.error({ err, sourceId: src._id }, "source poll could not be recorded");
        return null;
      })
      .finally(() => {
        running.delete(src._id);
        if (!closed) wake();
      });
    running.set(src._id, p);
    return p;
  }

  async function scan(): Promise<void> {
    const now = Date.now();
    const free = concurrency - running.size;
    if (free <= 0) return;
    for (const src of await store.due(now, free)) {
      if (running.has(src._id)) continue;
      const mine = await store.claim(src._id, owner, now, leaseMs);
      if (mine) void run(mine);
    }
  }

  function wake(): void {
    if (closed) return;
    if (scanning) {
      again = true;
      return;
    }
    scanning = true;
    scan()
      .catch((err: unknown) => log.warn({ err }, "due sources could not be read; the next tick tries again"))
      .finally(() => {
        scanning = false;
        if (again) {
          again = false;
          wake();
        }
      });
  }

  const ticker = setInterval(wake, opts.tickMs ?? 1_000);
  ticker.unref();

  return {
    wake,
    async pollNow(projectId, id) {
      const src = await store.get(projectId, id);
      if (!src) return null;
      const inHere = running.get(id);
      if (inHere) return (await inHere) ?? store.get(projectId, id);
      const mine = await store.claim(id, owner, Date.now(), leaseMs, true);
      // Another replica is polling it right now: that poll is the one asked for.
      if (!mine) return src;
      return (await run(mine)) ?? store.get(projectId, id);
    },
    async close() {
      closed = true;
      clearInterval(ticker);
      // A poll cut short here is taken over by a replica once its lease runs out; its articles are kept.
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([Promise.allSettled([...running.values()]), new Promise((r) => (timer = setTimeout(r, 5_000)))]);
      clearTimeout(timer);
    },
  };
}
