// Every failure leaves the gateway as the spec's ErrorResult JSON: "fail" for
// 4xx, "error" for 5xx. Nothing else (HTML pages, stack traces) gets out.
import { Code, ConnectError } from "@connectrpc/connect";
import type { Context, Next } from "koa";
import type { Logger } from "../lib/log.js";
import { drainBody } from "./body.js";
import { isStorageFailure, STORAGE_FAILURE_ANSWER, STORAGE_FAILURE_KEY } from "../lib/store/errors.js";

export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = "HttpError";
  }
}

/**
 * RPC status → HTTP status, as fixed in DESIGN.md. DeadlineExceeded is 504:
 * the upstream did not answer in time, which is what a gateway timeout means
 * to HTTP clients (503 stays "the service is unavailable, try later").
 */
export function httpStatusOf(code: Code): number {
  switch (code) {
    case Code.InvalidArgument:
    case Code.AlreadyExists:
    case Code.FailedPrecondition:
    case Code.OutOfRange:
      return 400;
    case Code.Unauthenticated:
      return 401;
    case Code.PermissionDenied:
      return 403;
    case Code.NotFound:
      return 404;
    case Code.ResourceExhausted:
      return 429;
    case Code.Unavailable:
      return 503;
    case Code.DeadlineExceeded:
      return 504;
    default:
      return 500;
  }
}

const SERVER_MESSAGES: Record<number, string> = {
  500: "Internal error",
  501: "Not implemented",
  503: "Service temporarily unavailable, please retry",
  504: "The service did not answer in time, please retry",
};

export function errorBody(status: number, message: string): { result: "fail" | "error"; message: string } {
  return { result: status >= 500 ? "error" : "fail", message };
}

interface Mapped {
  status: number;
  message: string;
  headers: Record<string, string>;
}

/** Status, message and headers of the ErrorResult an error becomes (also for one line of an import). */
export function mapError(err: unknown, requestId: string): Mapped {
  if (err instanceof HttpError) return { status: err.status, message: err.message, headers: err.headers };
  if (err instanceof ConnectError) {
    // A store that could not write (and changed nothing): 507 for a full volume, 503 otherwise, saying which.
    const failure = err.code === Code.Unavailable ? err.metadata.get(STORAGE_FAILURE_KEY) : null;
    if (isStorageFailure(failure)) {
      const answer = STORAGE_FAILURE_ANSWER[failure];
      return { status: answer.status, message: `${answer.message} (request id ${requestId})`, headers: {} };
    }
    const status = httpStatusOf(err.code);
    const headers: Record<string, string> = status === 401 ? { "WWW-Authenticate": 'Bearer realm="api"' } : {};
    // Upstream 4xx messages are written for publishers; 5xx ones may describe
    // internals, so the client gets a generic text and the log the detail.
    const message = status < 500 ? err.rawMessage : `${SERVER_MESSAGES[status] ?? SERVER_MESSAGES[500]} (request id ${requestId})`;
    return { status, message, headers };
  }
  return { status: 500, message: `${SERVER_MESSAGES[500]} (request id ${requestId})`, headers: {} };
}

export interface ErrorMiddlewareOptions {
  /** Methods some route serves at this path (empty: no route has the path). */
  allowedMethods?: (path: string) => string[];
  /** How much of an unread request body is discarded after an error answer (see drainBody). */
  drainBytes?: number;
}

function methodNotAllowed(method: string, allowed: string[]): HttpError {
  const allow = allowed.join(", ");
  return new HttpError(405, `Method ${method} is not allowed here; allowed: ${allow}`, { Allow: allow });
}

/**
 * Turns thrown errors and body-less 404/405/501 into ErrorResult JSON. A
 * method no route knows (TRACE, PROPFIND...) is the client's mistake like any
 * other wrong method: 405 with Allow, not 501.
 */
export function errorMiddleware(opts: ErrorMiddlewareOptions = {}) {
  const drainBytes = opts.drainBytes ?? 10 * 1024 * 1024;
  return async (ctx: Context, next: Next): Promise<void> => {
    try {
      await next();
      if (ctx.body == null && !ctx.response.get("Location")) {
        if (ctx.status === 404) throw new HttpError(404, `No such endpoint: ${ctx.method} ${ctx.path}`);
        if (ctx.status === 405) throw methodNotAllowed(ctx.method, String(ctx.response.get("Allow")).split(/,\s*/));
        if (ctx.status === 501) {
          const allowed = opts.allowedMethods?.(ctx.path) ?? [];
          if (allowed.length === 0) throw new HttpError(404, `No such endpoint: ${ctx.method} ${ctx.path}`);
          throw methodNotAllowed(ctx.method, allowed);
        }
      }
    } catch (err) {
      // Read only here: the request's child logger is built on first use.
      const log: Logger = ctx.state.log;
      const mapped = mapError(err, ctx.state.requestId);
      if (mapped.status >= 500) log.error({ err, status: mapped.status }, "request failed");
      else if (mapped.status === 405) log.info({ status: mapped.status, method: ctx.method }, "method not allowed");
      else log.debug({ status: mapped.status, message: mapped.message }, "request rejected");
      ctx.set(mapped.headers);
      ctx.status = mapped.status;
      ctx.body = errorBody(mapped.status, mapped.message);
      // The answer must reach a client that is still uploading (413, 401 before the body...).
      drainBody(ctx.req, drainBytes);
    }
  };
}
