// Clients for internal calls. One HTTP/2 session manager per target URL is
// shared by every client in the process, so calls multiplex over a
// long-lived connection instead of dialling per call.
import { createClient, type Client, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport, Http2SessionManager } from "@connectrpc/connect-node";
import type { DescService } from "@bufbuild/protobuf";

const sessions = new Map<string, Http2SessionManager>();

function sessionFor(baseUrl: string): Http2SessionManager {
  let s = sessions.get(baseUrl);
  if (!s) {
    s = new Http2SessionManager(baseUrl, { pingIntervalMs: 30_000, idleConnectionTimeoutMs: 5 * 60_000 });
    sessions.set(baseUrl, s);
  }
  return s;
}

export interface ClientOptions {
  /** Static bearer token sent on every call (service-to-service). */
  token?: string;
  interceptors?: Interceptor[];
  timeoutMs?: number;
}

export function rpcClient<T extends DescService>(service: T, baseUrl: string, opts: ClientOptions = {}): Client<T> {
  const interceptors: Interceptor[] = [...(opts.interceptors ?? [])];
  if (opts.token) {
    const value = `Bearer ${opts.token}`;
    interceptors.push((next) => (req) => {
      if (!req.header.has("authorization")) req.header.set("authorization", value);
      return next(req);
    });
  }
  const transport = createConnectTransport({
    baseUrl,
    httpVersion: "2",
    useBinaryFormat: true,
    sessionManager: sessionFor(baseUrl),
    interceptors,
    defaultTimeoutMs: opts.timeoutMs ?? 30_000,
  });
  return createClient(service, transport);
}

/** Closes every shared HTTP/2 session; used on shutdown. */
export function closeRpcClients(): void {
  for (const s of sessions.values()) s.abort();
  sessions.clear();
}
