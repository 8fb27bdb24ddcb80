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

export function requestContext(log: Logger) {
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
        const ms = Math.round((performance.now() - started) * 10) / 10;
        log.info({ reqId: requestId, method: ctx.method, path: loggablePath(ctx.path), status: ctx.status, ms }, "request");
      }
    }
  };
}
