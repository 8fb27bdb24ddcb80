// Request ids across processes: the gateway sends x-request-id with every
// RPC; the server interceptor keeps it in AsyncLocalStorage for the whole
// call, every log line written meanwhile carries it (lib/log.ts mixin), and
// outgoing RPCs made during the call forward it (client interceptor).
import { AsyncLocalStorage } from "node:async_hooks";
import type { Interceptor } from "@connectrpc/connect";

export const REQUEST_ID_HEADER = "x-request-id";

// Ids end up in logs and headers: only short, plain ones are trusted.
const SANE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

const store = new AsyncLocalStorage<string>();

export const isSaneRequestId = (id: string | null | undefined): id is string => typeof id === "string" && SANE_ID.test(id);

/** The request id of the call being handled, if any. */
export function currentRequestId(): string | undefined {
  return store.getStore();
}

/** Runs fn with `id` as the current request id (e.g. for one bus job); without an id, fn runs as is. */
export function withRequestId<T>(id: string | undefined, fn: () => T): T {
  return isSaneRequestId(id) ? store.run(id, fn) : fn();
}

/**
 * Server side: adopt the caller's id. None is invented when the caller sent
 * none (health probes, the reconciler's work): an id that appears nowhere
 * else would correlate nothing.
 */
export function requestIdServerInterceptor(): Interceptor {
  return (next) => (req) => {
    const given = req.header.get(REQUEST_ID_HEADER);
    return isSaneRequestId(given) ? store.run(given, () => next(req)) : next(req);
  };
}

/** Client side: forward the current id unless the caller set one explicitly. */
export function requestIdClientInterceptor(): Interceptor {
  return (next) => (req) => {
    const id = store.getStore();
    if (id && !req.header.has(REQUEST_ID_HEADER)) req.header.set(REQUEST_ID_HEADER, id);
    return next(req);
  };
}
