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
  async function run(spec: Spec, url: string, requestHeader: Headers, rawTimeout: string | undefined, input: () => Promise<Message>, watch: Watch): Promise<Answer> {
    const timeoutMs = rawTimeout !== undefined && TIMEOUT.test(rawTimeout) ? Number(rawTimeout) : undefined;
    const context = new CallContext(spec.method as DescMethod, url, requestHeader, timeoutMs !== undefined ? Date.now() + timeoutMs : undefined, watch);
    try {
      if (rawTimeout !== undefined && timeoutMs === undefined) throw new ConnectError(`protocol error: invalid connect timeout value: ${rawTimeout}`, Code.InvalidArgument);
      const output = await invoke(spec, context, await input(), opts.interceptors);
      return { ok: true, message: output, header: context.headerIfBuilt, trailer: context.trailerIfBuilt };
    } catch (e) {
      const error = e instanceof ConnectError ? e : new ConnectError("internal error", Code.Internal, undefined, undefined, e);
      return { ok: false, error, header: context.responseHeader, trailer: context.responseTrailer };
    } finally {
      context.dispose();
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
              (target.service as (...a: unknown[]) => unknown).call(target, service, impl, options);
              // The proxy, not the router: a chained .service() must be captured too.
              return receiver;
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

/** Connects the caller going away to a call's abort; returns the undo. */
type Watch = (abort: (reason: ConnectError) => void) => () => void;

// The per-call objects below are classes, not object literals with getters:
// a literal's accessors are fresh closures, which gave every call object its
// own hidden class in the old generation. Those kept the call's young objects
// alive through scavenges (about 1 MB promoted per scavenge under load, each
// scavenge several times slower). With classes every call shares one shape.

/**
 * The handler context of one call. Response headers, the abort signal and
 * the deadline timer are built only when something reads them: most calls
 * answer with the defaults and never look at the signal.
 */
class CallContext implements HandlerContext {
  readonly service: DescService;
  readonly requestMethod = "POST";
  readonly protocolName = "connect";
  readonly values = createContextValues();
  #header: Headers | undefined;
  #trailer: Headers | undefined;
  #controller: AbortController | undefined;
  #timer: NodeJS.Timeout | undefined;
  #unwatch: (() => void) | undefined;

  constructor(
    readonly method: DescMethod,
    readonly url: string,
    readonly requestHeader: Headers,
    private readonly deadline: number | undefined,
    private readonly watch: Watch,
  ) {
    this.service = method.parent;
  }

  get responseHeader(): Headers {
    return (this.#header ??= new Headers({ "content-type": "application/proto" }));
  }
  get responseTrailer(): Headers {
    return (this.#trailer ??= new Headers());
  }
  get headerIfBuilt(): Headers | undefined {
    return this.#header;
  }
  get trailerIfBuilt(): Headers | undefined {
    return this.#trailer;
  }
  timeoutMs(): number | undefined {
    return this.deadline === undefined ? undefined : this.deadline - Date.now();
  }
  get signal(): AbortSignal {
    if (!this.#controller) {
      const controller = (this.#controller = new AbortController());
      const abort = (reason: ConnectError) => controller.abort(reason);
      this.#unwatch = this.watch(abort);
      if (this.deadline !== undefined) {
        this.#timer = setTimeout(abort, Math.max(0, this.deadline - Date.now()), new ConnectError("the operation timed out", Code.DeadlineExceeded));
        this.#timer.unref();
      }
    }
    return this.#controller.signal;
  }
  dispose(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#unwatch?.();
  }
}

/** What the implementation sees: the call's context with the request's (possibly intercepted) header and values. */
class ImplContext implements HandlerContext {
  readonly method: DescMethod;
  readonly service: DescService;
  readonly requestMethod: string;
  readonly protocolName: string;
  readonly url: string;
  readonly requestHeader: Headers;
  readonly values: HandlerContext["values"];
  constructor(
    private readonly call: CallContext,
    private readonly req: AnyUnaryRequest,
  ) {
    this.method = call.method;
    this.service = req.service;
    this.requestMethod = call.requestMethod;
    this.protocolName = call.protocolName;
    this.url = call.url;
    this.requestHeader = req.header;
    this.values = req.contextValues;
  }
  timeoutMs(): number | undefined {
    return this.call.timeoutMs();
  }
  get responseHeader(): Headers {
    return this.call.responseHeader;
  }
  get responseTrailer(): Headers {
    return this.call.responseTrailer;
  }
  get signal(): AbortSignal {
    return this.req.signal;
  }
}

/** The request the interceptors see; its signal is the call's, built on demand. */
class CallRequest {
  readonly stream = false as const;
  readonly service: DescService;
  readonly requestMethod: string;
  readonly url: string;
  readonly header: Headers;
  readonly contextValues: AnyUnaryRequest["contextValues"];
  constructor(
    private readonly call: CallContext,
    readonly method: AnyUnaryRequest["method"],
    readonly message: Message,
  ) {
    this.service = call.service;
    this.requestMethod = call.requestMethod;
    this.url = call.url;
    this.header = call.requestHeader;
    this.contextValues = call.values;
  }
  get signal(): AbortSignal {
    return this.call.signal;
  }
}

/** The implementation's own answer; its headers write through to the call's. */
class ImplResponse {
  readonly stream = false as const;
  constructor(
    private readonly call: CallContext,
    readonly service: DescService,
    readonly method: AnyUnaryResponse["method"],
    readonly message: Message,
  ) {}
  get header(): Headers {
    return this.call.responseHeader;
  }
  get trailer(): Headers {
    return this.call.responseTrailer;
  }
}

/**
 * Runs interceptors and implementation like Connect's invokeUnaryImplementation,
 * but without reading `context.signal` on the way: Connect copies it into the
 * request and the handler context, which built an AbortController (and a
 * deadline timer) for every call although handlers rarely look at it. Here
 * both read it only on demand.
 */
async function invoke(spec: Spec, context: CallContext, input: Message, interceptors: Interceptor[]): Promise<Message> {
  const method = spec.method as AnyUnaryResponse["method"];
  const implFn = spec.impl as (i: Message, c: HandlerContext) => unknown;
  let own: ImplResponse | undefined;
  // A method, not a named arrow: under tsx every named arrow made per call also pays for a `name` property.
  const { impl } = {
    async impl(req: AnyUnaryRequest): Promise<AnyUnaryResponse> {
      const out = await implFn(req.message, new ImplContext(context, req));
      own = new ImplResponse(context, req.service, method, create(method.output, out as never));
      return own as unknown as AnyUnaryResponse;
    },
  };
  let next = impl;
  for (let i = interceptors.length - 1; i >= 0; i--) next = interceptors[i](next as Parameters<Interceptor>[0]) as unknown as UnaryFn;
  const res = await next(new CallRequest(context, method, input) as unknown as AnyUnaryRequest);
  // The implementation's own answer already writes through to the context.
  if (res !== (own as unknown)) {
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
