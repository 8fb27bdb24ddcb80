// Clients for internal calls. A small pool of HTTP/2 sessions per target URL
// is shared by every client in the process, so calls multiplex over
// long-lived connections instead of dialling per call. Unary calls take the
// lean path in unary.ts; streams use Connect's own transport.
import { createClient, type Client, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport, Http2SessionManager } from "@connectrpc/connect-node";
import type { DescService } from "@bufbuild/protobuf";
import { rpcClientMetrics } from "./metrics.js";
import { createLeanTransport } from "./unary.js";

const sessions = new Map<string, Http2SessionManager[]>();

/**
 * Several sessions let the peer's HTTP/2 work and ours interleave instead of
 * queueing behind one socket; RPC_CLIENT_SESSIONS overrides the default.
 */
const POOL_SIZE = Math.max(1, Math.min(16, Number(process.env.RPC_CLIENT_SESSIONS) || 2));

function sessionsFor(baseUrl: string): Http2SessionManager[] {
  let pool = sessions.get(baseUrl);
  if (!pool) {
    pool = Array.from({ length: POOL_SIZE }, () => new Http2SessionManager(baseUrl, { pingIntervalMs: 30_000, idleConnectionTimeoutMs: 5 * 60_000 }));
    sessions.set(baseUrl, pool);
  }
  return pool;
}

export interface ClientOptions {
  /** Static bearer token sent on every call (service-to-service). */
  token?: string;
  interceptors?: Interceptor[];
  timeoutMs?: number;
}

export function rpcClient<T extends DescService>(service: T, baseUrl: string, opts: ClientOptions = {}): Client<T> {
  const interceptors: Interceptor[] = [rpcClientMetrics(), ...(opts.interceptors ?? [])];
  if (opts.token) {
    const value = `Bearer ${opts.token}`;
    interceptors.push((next) => (req) => {
      if (!req.header.has("authorization")) req.header.set("authorization", value);
      return next(req);
    });
  }
  const pool = sessionsFor(baseUrl);
  const defaultTimeoutMs = opts.timeoutMs ?? 30_000;
  const streams = createConnectTransport({ baseUrl, httpVersion: "2", useBinaryFormat: true, sessionManager: pool[0], interceptors, defaultTimeoutMs });
  return createClient(service, createLeanTransport({ baseUrl, sessions: pool, interceptors, defaultTimeoutMs, fallback: streams }));
}

/** Closes every shared HTTP/2 session; used on shutdown. */
export function closeRpcClients(): void {
  for (const pool of sessions.values()) for (const s of pool) s.abort();
  sessions.clear();
}
