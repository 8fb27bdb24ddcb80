// Ad-hoc audio (Synthesize) is temporary: its keys carry the UTC hour they
// were made in, `adhoc/<YYYYMMDDHH>/<id>/…`, and a sweep deletes every hour
// folder older than the TTL. The hour in the key lets both blob stores (a
// directory, GridFS) expire files with the prefix delete they already have,
// without listing or scanning metadata.
import type { BlobStore } from "../../lib/blob/port.js";
import type { Logger } from "../../lib/log.js";

const HOUR = 3_600_000;
export const DEFAULT_ADHOC_TTL_MS = 24 * HOUR;

const stamp = (hourStart: number) => new Date(hourStart).toISOString().slice(0, 13).replace(/[-T]/g, "");

/** Where one ad-hoc synthesis is stored: `adhoc/2026112418/<id>`. */
export function adhocBase(now: number, id: string): string {
  return `adhoc/${stamp(Math.floor(now / HOUR) * HOUR)}/${id}`;
}

/** When files stored now are gone at the latest (TTL, rounded up to the hour folder, plus one sweep). */
export function adhocExpiry(now: number, ttlMs: number, everyMs: number): number {
  return Math.floor(now / HOUR) * HOUR + HOUR + ttlMs + everyMs;
}

export interface AdhocSweeperOptions {
  blobs: BlobStore;
  ttlMs?: number;
  everyMs?: number;
  /** How far back the first sweep after a start looks for hour folders left by a long outage. */
  lookbackMs?: number;
  log: Logger;
  now?: () => number;
}

export interface AdhocSweeper {
  sweep(): Promise<number>;
  stop(): void;
  readonly ttlMs: number;
  readonly everyMs: number;
}

export function startAdhocSweeper(opts: AdhocSweeperOptions): AdhocSweeper {
  const ttlMs = opts.ttlMs ?? DEFAULT_ADHOC_TTL_MS;
  const everyMs = opts.everyMs ?? 10 * 60_000;
  const lookbackMs = opts.lookbackMs ?? 7 * 24 * HOUR;
  const now = opts.now ?? Date.now;
  let next: number | undefined;
  let running: Promise<number> | undefined;

  async function sweep(): Promise<number> {
    // An hour folder may go once its newest possible file (made at the end of the hour) is older than the TTL.
    const last = Math.floor((now() - ttlMs) / HOUR) * HOUR - HOUR;
    let h = next ?? last - Math.floor(lookbackMs / HOUR) * HOUR;
    let swept = 0;
    for (; h <= last; h += HOUR) {
      await opts.blobs.deletePrefix(`adhoc/${stamp(h)}/`);
      next = h + HOUR;
      swept++;
    }
    return swept;
  }

  const run = () => {
    running ??= sweep()
      .catch((err: unknown) => {
        opts.log.warn({ err: { message: (err as Error).message } }, "ad-hoc audio sweep failed; retrying at the next one");
        return 0;
      })
      .finally(() => (running = undefined));
    return running;
  };
  const timer = setInterval(run, everyMs);
  timer.unref();
  void run();
  return {
    sweep: run,
    stop: () => clearInterval(timer),
    ttlMs,
    everyMs,
  };
}
