// Calls between services that share a process (the embedded default runs
// them all in one) skip the socket: the client's lean transport hands the
// request message to the target server's lean unary path directly. Both
// sides still run their interceptors, deadlines and cancellation behave as on
// the wire, and errors arrive as a remote client would read them (code,
// message, details, metadata; an unexpected throw is a bare Internal error).
// What is gone is the HTTP/2 framing, the loopback socket and the protobuf
// encoding both ways: on this 2-core machine those were most of the CPU of a
// gateway read (bench/README.md, round 4).
//
// Messages cross by reference. That is safe because both sides treat them as
// immutable once handed over: clients build a request per call, handlers
// build their answers from fresh store copies, and nothing here edits a
// message it received.
//
// A server joins when started with `inProcess` (the embedded launcher does,
// unless RPC_IN_PROCESS=false); it keeps listening all the same, so plain
// gRPC and Connect clients from other processes reach it as before.
import type { Message } from "@bufbuild/protobuf";

export interface InProcessAnswer {
  message: Message;
  header?: Headers;
  trailer?: Headers;
}

export interface InProcessCall {
  /** e.g. "/articles.v1.ArticlesService/GetArticle" */
  path: string;
  /** Base URL + path, as the handler's context reports it. */
  url: string;
  header: Headers;
  message: Message;
  timeoutMs: number | undefined;
  signal: AbortSignal;
}

export interface InProcessEndpoint {
  /** Resolves with the answer; rejects with the ConnectError a remote client would see. Undefined: not a lean unary method. */
  call(call: InProcessCall): Promise<InProcessAnswer> | undefined;
}

const endpoints = new Map<string, InProcessEndpoint>();

/** Registers a server under its base URL; returns the way to leave. */
export function joinInProcess(baseUrl: string, endpoint: InProcessEndpoint): () => void {
  const key = withoutTrailingSlash(baseUrl);
  endpoints.set(key, endpoint);
  return () => {
    if (endpoints.get(key) === endpoint) endpoints.delete(key);
  };
}

/**
 * The server behind this base URL when it lives in this process. Called per
 * call: the URL is taken as given (clients trim trailing slashes once).
 */
export function inProcessEndpoint(baseUrl: string): InProcessEndpoint | undefined {
  return endpoints.size === 0 ? undefined : endpoints.get(baseUrl);
}

function withoutTrailingSlash(baseUrl: string): string {
  return baseUrl.replace(/\/+$/, "");
}
