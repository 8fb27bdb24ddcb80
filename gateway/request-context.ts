// Request ids and the access log. A caller's x-request-id is kept when it is
// short and plain (it ends up in logs and upstream headers); otherwise a new
// one is made. Every log line of the request carries it.
import { randomUUID } from "node:crypto";
import type { Context, Next } from "koa";
import type { Logger } from "../lib/log.js";

const SANE_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const EXTERNAL_URL_PREFIX = "/api/articles_external_url/";

export function requestIdOf(header: string | undefined): string {
  return header && SANE_ID.test(header) ? header : randomUUID();
}

/**
 * The path as logged: an article URL looked up by #9 may carry its own query
 * string (with who knows what in it), so that part is cut off. In any case,
 * as the router reaches the route in any case.
 */
export function loggablePath(path: string): string {
  if (path.slice(0, EXTERNAL_URL_PREFIX.length).toLowerCase() !== EXTERNAL_URL_PREFIX) return path;
  const cut = path.search(/%3F|\?/i);
  return cut === -1 ? path : `${path.slice(0, cut)}?…`;
}

/**
 * What the gateway keeps per request in `ctx.state`. A class, not a getter
 * defined on Koa's plain object: `Object.defineProperty` with a fresh closure
 * gave every request its own hidden class, allocated in the old generation,
 * which kept the request's young objects alive through scavenges (promoted
 * about a kilobyte per request and made each scavenge ten times slower).
 */
export class RequestState {
  #child: Logger | undefined;
  constructor(
    private readonly parentLog: Logger,
    readonly requestId: string,
  ) {}

  /** A child logger costs an object and its serialised bindings; most requests never log anything but their access line. */
  get log(): Logger {
    return (this.#child ??= this.parentLog.child({ reqId: this.requestId }));
  }
}

/** A successful read slower than this is logged on its own line at info. */
export const SLOW_READ_MS = 1_000;
/** Successful reads are summed in windows of this length: one line per window that had any. */
export const READ_SUMMARY_MS = 10_000;

const READ_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * Successful reads, summed per window: a line per read cost more CPU than the
 * read itself on the embedded default's fastest paths (making the line, not
 * writing it). One line per window says how many there were, how their
 * statuses split, and their mean and slowest time.
 */
class ReadSummary {
  readonly #windowMs: number;
  #count = 0;
  #totalMs = 0;
  #maxMs = 0;
  #statuses: Record<number, number> = {};
  #since = 0;
  #timer: NodeJS.Timeout | undefined;
  constructor(
    private readonly log: Logger,
    windowMs: number,
  ) {
    this.#windowMs = windowMs;
  }

  add(status: number, ms: number): void {
    if (this.#count === 0) {
      this.#since = Date.now();
      // A timer per window, not per read; unref'd: it never keeps a process up.
      this.#timer = setTimeout(() => this.flush(), this.#windowMs).unref();
    }
    this.#count++;
    this.#totalMs += ms;
    if (ms > this.#maxMs) this.#maxMs = ms;
    this.#statuses[status] = (this.#statuses[status] ?? 0) + 1;
  }

  flush(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#count === 0) return;
    const round = (ms: number) => Math.round(ms * 10) / 10;
    this.log.info(
      { reads: this.#count, statuses: this.#statuses, meanMs: round(this.#totalMs / this.#count), maxMs: round(this.#maxMs), seconds: round((Date.now() - this.#since) / 1000) },
      "reads answered",
    );
    this.#count = this.#totalMs = this.#maxMs = 0;
    this.#statuses = {};
  }
}

/**
 * A request's own access-log line. Module level, not a closure made per
 * request: under tsx every named closure costs a name definition on each call.
 */
function accessLine(ctx: Context, reqId: string, status: number, ms: number) {
  return { reqId, method: ctx.method, path: loggablePath(ctx.path), status, ms: Math.round(ms * 10) / 10 };
}

/**
 * Request ids and the access log. Every write, every error or refusal
 * (status 400 and above) and every read slower than SLOW_READ_MS gets a line
 * of its own at info; successful reads (GET, HEAD, OPTIONS under 400) are
 * summed into one "reads answered" line per READ_SUMMARY_MS, and each gets its
 * own line at debug (docs/running.md, "Logs").
 */
export function requestContext(log: Logger, opts: { readSummaryMs?: number } = {}) {
  const reads = new ReadSummary(log, opts.readSummaryMs ?? READ_SUMMARY_MS);
  return async (ctx: Context, next: Next): Promise<void> => {
    const started = performance.now();
    const requestId = requestIdOf(ctx.get("x-request-id") || undefined);
    ctx.state = new RequestState(log, requestId);
    ctx.set("X-Request-Id", requestId);
    ctx.set("X-Content-Type-Options", "nosniff");
    try {
      await next();
    } finally {
      if (log.isLevelEnabled("info")) {
        const ms = performance.now() - started;
        const status = ctx.status;
        if (status >= 400 || ms >= SLOW_READ_MS || !READ_METHODS.has(ctx.method)) log.info(accessLine(ctx, requestId, status, ms), "request");
        else if (log.isLevelEnabled("debug")) log.debug(accessLine(ctx, requestId, status, ms), "request");
        else reads.add(status, ms);
      }
    }
  };
}
