// Bounds on the uploads of bulk imports (docs/import.md#limits): how many may
// be open per project and on the whole gateway, and how slowly an upload may
// arrive. An import holds a connection (a descriptor) for as long as its
// upload lasts, so these bounds are what keep slow or many uploads from
// starving everyone else's requests.
import type { ConfigSchema } from "../lib/config.js";
import { HttpError } from "./errors.js";

export const IMPORT_VARS = {
  IMPORT_MAX_PER_PROJECT: { type: "integer", minimum: 1, maximum: 1_000, default: 2, description: "bulk imports one project may have open at once; more get 429 (docs/import.md#limits)" },
  IMPORT_MAX_OPEN: { type: "integer", minimum: 1, maximum: 100_000, default: 64, description: "bulk imports open at once on one gateway, all projects together; more get 429" },
  IMPORT_MIN_UPLOAD_BYTES_PER_SECOND: {
    type: "integer",
    minimum: 1,
    maximum: 1_000_000_000,
    default: 1024,
    description: "an import upload arriving slower than this (measured while the gateway waits for it) is ended with its summary line",
  },
  IMPORT_UPLOAD_WINDOW_SECONDS: { type: "integer", minimum: 1, maximum: 3_600, default: 30, description: "the waiting time over which IMPORT_MIN_UPLOAD_BYTES_PER_SECOND is judged" },
  IMPORT_CALLS_IN_FLIGHT: {
    type: "integer",
    minimum: 1,
    maximum: 64,
    default: 1,
    description: "CreateArticles calls of all imports together in flight at once from one gateway; more where the articles service runs in processes of its own and has room",
  },
} as const satisfies ConfigSchema;

export interface ImportLimits {
  maxPerProject: number;
  maxOpen: number;
  minBytesPerSecond: number;
  windowMs: number;
  callsInFlight: number;
}

export function importLimitsOf(cfg: {
  IMPORT_MAX_PER_PROJECT: number;
  IMPORT_MAX_OPEN: number;
  IMPORT_MIN_UPLOAD_BYTES_PER_SECOND: number;
  IMPORT_UPLOAD_WINDOW_SECONDS: number;
  IMPORT_CALLS_IN_FLIGHT: number;
}): ImportLimits {
  return {
    maxPerProject: cfg.IMPORT_MAX_PER_PROJECT,
    maxOpen: cfg.IMPORT_MAX_OPEN,
    minBytesPerSecond: cfg.IMPORT_MIN_UPLOAD_BYTES_PER_SECOND,
    windowMs: cfg.IMPORT_UPLOAD_WINDOW_SECONDS * 1000,
    callsInFlight: cfg.IMPORT_CALLS_IN_FLIGHT,
  };
}

/** The limits with every variable at its default: one mapping from variables to limits, importLimitsOf's. */
export const DEFAULT_IMPORT_LIMITS: ImportLimits = importLimitsOf(
  Object.fromEntries(Object.entries(IMPORT_VARS).map(([name, spec]) => [name, spec.default])) as Parameters<typeof importLimitsOf>[0],
);

/** Seconds a refused import is told to wait: about the time a small import takes. */
export const IMPORT_RETRY_AFTER_S = 10;

/** Open imports per project and in all; `enter` refuses past a cap with a 429 ErrorResult carrying Retry-After. */
export function openImports(limits: Pick<ImportLimits, "maxPerProject" | "maxOpen">) {
  const perProject = new Map<string, number>();
  let open = 0;
  const busy = (message: string) => new HttpError(429, message, { "Retry-After": String(IMPORT_RETRY_AFTER_S) });
  return {
    get open() {
      return open;
    },
    /** Takes a place for one import of `project`; the returned function gives it back (once). */
    enter(project: string): () => void {
      const mine = perProject.get(project) ?? 0;
      if (mine >= limits.maxPerProject) throw busy(`This project already has ${mine} imports open (at most ${limits.maxPerProject}); wait for one to finish`);
      if (open >= limits.maxOpen) throw busy(`The server has ${open} imports open (at most ${limits.maxOpen}); try again shortly`);
      perProject.set(project, mine + 1);
      open++;
      let left = false;
      return () => {
        if (left) return;
        left = true;
        open--;
        const n = (perProject.get(project) ?? 1) - 1;
        if (n <= 0) perProject.delete(project);
        else perProject.set(project, n);
      };
    },
  };
}

export interface UploadMeter {
  /** The upload's chunks, ending early (no error) when it became too slow. */
  input: AsyncIterable<Buffer>;
  /** Why the upload was cut short, if it was. */
  readonly stopped: string | undefined;
}

/**
 * The upload as chunks, timed only while the import waits for it (not while
 * the import bucket or a slow reader of the answer holds it back). Each time
 * that waiting adds up to a window, the bytes that came during it must reach
 * the minimum rate; a connection that sends nothing at all ends at the same
 * point. A trickle of bytes cannot keep it open: what counts is the rate,
 * not the last byte.
 */
export function meteredUpload(source: AsyncIterable<Buffer>, limits: Pick<ImportLimits, "minBytesPerSecond" | "windowMs">): UploadMeter {
  let stopped: string | undefined;
  const needed = (limits.minBytesPerSecond * limits.windowMs) / 1000;
  async function* input(): AsyncGenerator<Buffer> {
    const it = source[Symbol.asyncIterator]();
    let pending: Promise<IteratorResult<Buffer>> | undefined;
    let waited = 0;
    let bytes = 0;
    try {
      for (;;) {
        const t0 = performance.now();
        let timer: NodeJS.Timeout | undefined;
        const late = new Promise<"late">((resolve) => (timer = setTimeout(() => resolve("late"), Math.max(0, limits.windowMs - waited))));
        // A read still pending when the window closed is the same read the next round waits for.
        pending ??= it.next();
        const next = await Promise.race([pending, late]);
        clearTimeout(timer);
        waited += performance.now() - t0;
        if (next !== "late") {
          pending = undefined;
          if (next.done) return;
          bytes += next.value.length;
        }
        if (waited >= limits.windowMs || next === "late") {
          if (bytes < needed) {
            stopped = `upload slower than ${limits.minBytesPerSecond} bytes per second over ${limits.windowMs / 1000} s: the import ended here; send the rest again (lines already imported are answered as such)`;
            return;
          }
          waited = 0;
          bytes = 0;
        }
        if (next !== "late") yield next.value;
      }
    } finally {
      // Not awaited: a read that never completes would hold it; the route destroys the request anyway.
      void Promise.resolve(it.return?.()).catch(() => {});
    }
  }
  return {
    input: input(),
    get stopped() {
      return stopped;
    },
  };
}
