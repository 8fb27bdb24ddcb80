// The server half of the lean unary path (see unary.ts). Unary calls in the
// Connect protocol with a binary body over HTTP/2, the shape every internal
// client sends, are answered here: one body read, decode, the same
// interceptors and implementation Connect would run, encode, one answer.
// Everything else (gRPC, gRPC-Web, JSON, compression, GET, streams, HTTP/1.1)
// falls through to Connect's own handler, so plain gRPC and Connect clients
// keep working unchanged.
import type http2 from "node:http2";
import { create, fromBinary, toBinary, type DescMessage, type DescMethod, type DescService, type Message } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  createContextValues,
  createMethodImplSpec,
  type ConnectRouter,
  type HandlerContext,
  type Interceptor,
  type MethodImplSpec,
  type UnaryRequest,
  type UnaryResponse,
} from "@connectrpc/connect";
import { codeToHttpStatus, errorToJsonBytes } from "@connectrpc/connect/protocol-connect";
import type { InProcessAnswer, InProcessCall } from "./in-process.js";

type Spec = Extract<MethodImplSpec, { kind: "unary" }>;

type Answer =
  | { ok: true; message: Message; header: Headers | undefined; trailer: Headers | undefined }
  | { ok: false; error: ConnectError; header: Headers; trailer: Headers };

export interface LeanUnaryServer {
  /** Wraps a router so that unary methods registered through it are also served by the lean path. */
  capture(router: ConnectRouter): ConnectRouter;
  /** Answers a call from a client in this process; undefined when the path is not a lean unary method. */
  call(call: InProcessCall): Promise<InProcessAnswer> | undefined;
  /** Answers the request when it is a lean unary call; false leaves it to Connect. */
  handle(req: http2.Http2ServerRequest, res: http2.Http2ServerResponse): boolean;
}

export interface LeanUnaryServerOptions {
  interceptors: Interceptor[];
  readMaxBytes: number;
}

/** Connect's grammar for connect-timeout-ms: up to 10 digits. */
const TIMEOUT = /^\d{1,10}$/;

export function createLeanUnaryServer(opts: LeanUnaryServerOptions): LeanUnaryServer {
  const specs = new Map<string, Spec>();

  function register(service: DescService, impl: Record<string, unknown>): void {
    for (const method of service.methods) {
      const fn = impl[method.localName];
      if (method.methodKind !== "unary" || typeof fn !== "function") continue;
      specs.set(`/${service.typeName}/${method.name}`, createMethodImplSpec(method, (fn as (...a: unknown[]) => unknown).bind(impl) as never) as Spec);
    }
  }

  function reply(res: http2.Http2ServerResponse, status: number, header: Headers | undefined, trailer: Headers | undefined, body: Uint8Array): void {
    const out: Record<string, string> = {};
    if (header) {
      header.forEach((v, k) => {
        out[k] = v;
      });
    } else out["content-type"] = "application/proto";
    trailer?.forEach((v, k) => {
      out[`trailer-${k}`] = v;
    });
    out["content-length"] = String(body.byteLength);
    res.writeHead(status, out);
    res.end(body);
  }

  function fail(res: http2.Http2ServerResponse, error: ConnectError, header: Headers, trailer: Headers): void {
    header.set("content-type", "application/json");
    error.metadata.forEach((v, k) => header.set(k, v));
    reply(res, codeToHttpStatus(error.code), header, trailer, errorToJsonBytes(error, {}));
  }

  /**
   * One call, whatever carried it: the request message, the interceptors and
   * the implementation, the response message. `watch` connects the caller going away to the
   * handler's signal, which is only built when something reads it.
   */
  async function run(spec: Spec, url: string, requestHeader: Headers, rawTimeout: string | undefined, input: () => Promise<Message>, watch: (abort: (reason: ConnectError) => void) => () => void): Promise<Answer> {
    const method = spec.method as DescMethod;
    // Built only when a handler or interceptor touches them; most calls answer with the defaults.
    let responseHeader: Headers | undefined;
    let responseTrailer: Headers | undefined;
    const timeoutMs = rawTimeout !== undefined && TIMEOUT.test(rawTimeout) ? Number(rawTimeout) : undefined;
    const deadline = timeoutMs !== undefined ? Date.now() + timeoutMs : undefined;
    // Most handlers never look at the signal: it is only built when asked for.
    let controller: AbortController | undefined;
    let timer: NodeJS.Timeout | undefined;
    // Method shorthand, not `const f = () =>`: under tsx, every named arrow
    // made per call also pays for a `name` property definition (keepNames).
    const { abort } = {
      abort(reason: ConnectError): void {
        controller?.abort(reason);
      },
    };
    let unwatch: (() => void) | undefined;
    const context: HandlerContext = {
      method,
      service: method.parent,
      requestMethod: "POST",
      protocolName: "connect",
      url,
      requestHeader,
      get responseHeader() {
        return (responseHeader ??= new Headers({ "content-type": "application/proto" }));
      },
      get responseTrailer() {
        return (responseTrailer ??= new Headers());
      },
      values: createContextValues(),
      timeoutMs() {
        return deadline === undefined ? undefined : deadline - Date.now();
      },
      get signal() {
        if (!controller) {
          controller = new AbortController();
          unwatch = watch(abort);
          if (deadline !== undefined) {
            timer = setTimeout(() => abort(new ConnectError("the operation timed out", Code.DeadlineExceeded)), Math.max(0, deadline - Date.now()));
            timer.unref();
          }
        }
        return controller.signal;
      },
    };
    try {
      if (rawTimeout !== undefined && timeoutMs === undefined) throw new ConnectError(`protocol error: invalid connect timeout value: ${rawTimeout}`, Code.InvalidArgument);
      const output = await invoke(spec, context, await input(), opts.interceptors);
      return { ok: true, message: output, header: responseHeader, trailer: responseTrailer };
    } catch (e) {
      const error = e instanceof ConnectError ? e : new ConnectError("internal error", Code.Internal, undefined, undefined, e);
      return { ok: false, error, header: context.responseHeader, trailer: context.responseTrailer };
    } finally {
      if (timer) clearTimeout(timer);
      unwatch?.();
    }
  }

  async function serve(spec: Spec, req: http2.Http2ServerRequest, res: http2.Http2ServerResponse, path: string): Promise<void> {
    const requestHeader = new Headers();
    for (const k in req.headers) {
      if (k.charCodeAt(0) === 58 /* ":" */) continue;
      const v = req.headers[k];
      if (Array.isArray(v)) for (const x of v) requestHeader.append(k, x);
      else if (v !== undefined) requestHeader.append(k, v);
    }
    const answer = await run(
      spec,
      `http://${req.headers[":authority"] ?? "localhost"}${path}`,
      requestHeader,
      req.headers["connect-timeout-ms"] as string | undefined,
      async () => {
        const bytes = await readBody(req, opts.readMaxBytes);
        try {
          return fromBinary(spec.method.input, bytes);
        } catch (e) {
          throw new ConnectError(`parse binary: ${(e as Error).message}`, Code.InvalidArgument);
        }
      },
      (abort) => {
        const { onClose } = {
          onClose(): void {
            if (!res.writableEnded) abort(new ConnectError("the client went away", Code.Canceled));
          },
        };
        if (res.stream.closed) {
          onClose();
          return () => undefined;
        }
        res.stream.once("close", onClose);
        return () => res.stream.off("close", onClose);
      },
    );
    if (answer.ok) reply(res, 200, answer.header, answer.trailer, toBinary(spec.method.output, answer.message));
    else fail(res, answer.error, answer.header, answer.trailer);
  }

  /** The same call handed over by a client in this process (see in-process.ts). */
  async function callHere(spec: Spec, call: InProcessCall): Promise<InProcessAnswer> {
    const answer = await run(
      spec,
      call.url,
      call.header,
      call.timeoutMs === undefined ? undefined : String(call.timeoutMs),
      () => Promise.resolve(call.message),
      (abort) => {
        const signal = call.signal;
        if (signal.aborted) {
          abort(new ConnectError("the client went away", Code.Canceled));
          return () => undefined;
        }
        const { onAbort } = {
          onAbort(): void {
            abort(new ConnectError("the client went away", Code.Canceled));
          },
        };
        signal.addEventListener("abort", onAbort);
        return () => signal.removeEventListener("abort", onAbort);
      },
    );
    if (answer.ok) return answer;
    // What a remote client reads back: code, message and details, with the
    // response headers, the error's own metadata and the trailers as metadata.
    const metadata = new Headers(answer.header);
    metadata.set("content-type", "application/json");
    answer.error.metadata.forEach((v, k) => metadata.set(k, v));
    answer.trailer.forEach((v, k) => metadata.append(k, v));
    const error = new ConnectError(answer.error.rawMessage, answer.error.code, metadata);
    // Details travel as they are; findDetails() reads both the outgoing and the incoming form.
    error.details.push(...answer.error.details);
    throw error;
  }

  return {
    capture(router) {
      return new Proxy(router, {
        get(target, prop, receiver) {
          if (prop === "service") {
            return (service: DescService, impl: Record<string, unknown>, options?: unknown) => {
              register(service, impl);
              return (target.service as (...a: unknown[]) => unknown).call(target, service, impl, options);
            };
          }
          return Reflect.get(target, prop, receiver) as unknown;
        },
      });
    },
    call(call) {
      const spec = specs.get(call.path);
      return spec ? callHere(spec, call) : undefined;
    },
    handle(req, res) {
      if (req.method !== "POST") return false;
      const h = req.headers;
      if (h["content-type"] !== "application/proto") return false;
      const enc = h["content-encoding"];
      if (enc !== undefined && enc !== "identity") return false;
      const v = h["connect-protocol-version"];
      if (v !== undefined && v !== "1") return false;
      const path = req.url;
      const spec = specs.get(path);
      if (!spec) return false;
      serve(spec, req, res, path).catch(() => res.stream.close(2 /* INTERNAL_ERROR */));
      return true;
    },
  };
}

type AnyUnaryRequest = UnaryRequest<DescMessage, DescMessage>;
type AnyUnaryResponse = UnaryResponse<DescMessage, DescMessage>;
type UnaryFn = (req: AnyUnaryRequest) => Promise<AnyUnaryResponse>;

/**
 * Runs interceptors and implementation like Connect's invokeUnaryImplementation,
 * but without reading `context.signal` on the way: Connect copies it into the
 * request and the handler context, which built an AbortController (and a
 * deadline timer) for every call although handlers rarely look at it. Here
 * both read it only on demand.
 */
async function invoke(spec: Spec, context: HandlerContext, input: Message, interceptors: Interceptor[]): Promise<Message> {
  const method = spec.method as DescMethod & { methodKind: "unary" };
  let own: AnyUnaryResponse | undefined;
  // A method, not a named arrow: see the note on `abort` in serve().
  const { impl } = {
    async impl(req: AnyUnaryRequest): Promise<AnyUnaryResponse> {
      const handlerContext: HandlerContext = {
        method: context.method,
        service: req.service,
        requestMethod: context.requestMethod,
        protocolName: context.protocolName,
        url: context.url,
        timeoutMs: context.timeoutMs,
        get responseHeader() {
          return context.responseHeader;
        },
        get responseTrailer() {
          return context.responseTrailer;
        },
        requestHeader: req.header,
        values: req.contextValues,
        get signal() {
          return req.signal;
        },
      };
      const out = await (spec.impl as (i: Message, c: HandlerContext) => unknown)(req.message, handlerContext);
      own = {
        stream: false,
        service: req.service,
        method: method as AnyUnaryResponse["method"],
        get header() {
          return context.responseHeader;
        },
        get trailer() {
          return context.responseTrailer;
        },
        message: create(method.output, out as never),
      };
      return own;
    },
  };
  let next = impl;
  for (let i = interceptors.length - 1; i >= 0; i--) next = interceptors[i](next as Parameters<Interceptor>[0]) as unknown as UnaryFn;
  const res = await next({
    stream: false,
    service: method.parent,
    method: method as AnyUnaryRequest["method"],
    requestMethod: context.requestMethod,
    url: context.url,
    header: context.requestHeader,
    contextValues: context.values,
    message: input,
    get signal() {
      return context.signal;
    },
  });
  // The implementation's own answer already writes through to the context.
  if (res !== own) {
    copyHeaders(res.header, context.responseHeader);
    copyHeaders(res.trailer, context.responseTrailer);
  }
  return res.message;
}

/** Interceptors may answer with headers of their own; they replace the context's, as in Connect. */
function copyHeaders(from: Headers, to: Headers): void {
  if (from === to) return;
  for (const k of [...to.keys()]) to.delete(k);
  from.forEach((v, k) => to.set(k, v));
}

function readBody(req: http2.Http2ServerRequest, max: number): Promise<Uint8Array> {
  const declared = Number(req.headers["content-length"]);
  if (declared > max) return Promise.reject(new ConnectError(`message size ${declared} is larger than configured readMaxBytes ${max}`, Code.ResourceExhausted));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (c: Buffer) => {
      size += c.length;
      if (size > max) {
        req.removeAllListeners("data");
        reject(new ConnectError(`message size ${size} is larger than configured readMaxBytes ${max}`, Code.ResourceExhausted));
        return;
      }
      chunks.push(c);
    });
    req.once("end", () => resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size)));
    req.once("error", (e) => reject(new ConnectError(`request body failed: ${e.message}`, Code.Canceled)));
    req.once("aborted", () => reject(new ConnectError("the client went away", Code.Canceled)));
  });
}
