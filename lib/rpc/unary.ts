// A lean client transport for unary calls in the Connect protocol (binary).
// Connect's generic transport runs every unary call through the streaming
// machinery: linked AbortControllers, a deadline signal, async iterables on
// both directions and an AbortError (a DOMException with a stack) when the
// call ends. Profiles showed that as most of the client's per-call CPU. A
// unary Connect call is one POST with one protobuf body and one answer, so
// this writes it straight onto a shared HTTP/2 session. Interceptors run
// exactly as with Connect's transport; server streams are delegated to it.
import type http2 from "node:http2";
import { create, fromBinary, toBinary, type DescMessage, type DescMethodUnary, type MessageInitShape } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  createContextValues,
  type ContextValues,
  type Interceptor,
  type Transport,
  type UnaryRequest,
  type UnaryResponse,
} from "@connectrpc/connect";
import { codeFromHttpStatus, errorFromJsonBytes } from "@connectrpc/connect/protocol-connect";
import type { Http2SessionManager } from "@connectrpc/connect-node";
import { inProcessEndpoint, type InProcessAnswer } from "./in-process.js";

export interface LeanTransportOptions {
  baseUrl: string;
  /** Sessions to spread calls over (round robin). */
  sessions: Http2SessionManager[];
  interceptors: Interceptor[];
  defaultTimeoutMs?: number;
  readMaxBytes?: number;
  /** Handles what this transport does not: streaming calls. */
  fallback: Transport;
}

// Interceptors may read req.signal; calls without a caller signal share one
// that never fires instead of paying for an AbortController each.
const NEVER = new AbortController().signal;

type AnyUnaryRequest = UnaryRequest<DescMessage, DescMessage>;
type AnyUnaryResponse = UnaryResponse<DescMessage, DescMessage>;

function headersFrom(h: http2.IncomingHttpHeaders): [Headers, Headers] {
  const header = new Headers();
  const trailer = new Headers();
  for (const k in h) {
    if (k.charCodeAt(0) === 58 /* ":" */) continue;
    const v = h[k];
    if (v === undefined) continue;
    const target = k.startsWith("trailer-") ? trailer : header;
    const name = target === trailer ? k.slice(8) : k;
    if (Array.isArray(v)) for (const x of v) target.append(name, x);
    else target.append(name, v);
  }
  return [header, trailer];
}

const PROTO_TYPE = /^application\/proto(?:;|$)/;

const firstValue = (v: string | string[] | undefined): string | undefined => (Array.isArray(v) ? v[0] : v);

/**
 * Nothing on the success path reads a unary response's headers unless a
 * caller asks for them (onHeader/onTrailer): two Headers objects per call
 * are built only then, from the raw HTTP/2 headers.
 */
class LeanResponse {
  readonly stream = false as const;
  #built: [Headers, Headers] | undefined;
  constructor(
    readonly service: AnyUnaryResponse["service"],
    readonly method: AnyUnaryResponse["method"],
    readonly message: AnyUnaryResponse["message"],
    private readonly raw: http2.IncomingHttpHeaders,
  ) {}
  get header(): Headers {
    return (this.#built ??= headersFrom(this.raw))[0];
  }
  get trailer(): Headers {
    return (this.#built ??= headersFrom(this.raw))[1];
  }
}

/** An in-process answer: the server's headers as it set them (none when it set none). */
class LocalResponse {
  readonly stream = false as const;
  constructor(
    readonly service: AnyUnaryResponse["service"],
    readonly method: AnyUnaryResponse["method"],
    readonly message: AnyUnaryResponse["message"],
    private readonly h: Headers | undefined,
    private readonly t: Headers | undefined,
  ) {}
  get header(): Headers {
    return this.h ?? new Headers({ "content-type": "application/proto" });
  }
  get trailer(): Headers {
    return this.t ?? new Headers();
  }
}

type Finish = (err: unknown, res?: AnyUnaryResponse) => void;

/**
 * One unary call, ended by whichever comes first: its answer (or error), the
 * caller's signal or the deadline. `start` gets the function that ends it and
 * a check whether it already has; what it returns runs when the call ends in
 * an error (e.g. to cancel the HTTP/2 stream).
 */
function callWithin(signal: AbortSignal, timeoutMs: number | undefined, start: (finish: Finish, ended: () => boolean) => (() => void) | void): Promise<AnyUnaryResponse> {
  return new Promise<AnyUnaryResponse>((resolve, reject) => {
    let timer: NodeJS.Timeout | undefined;
    let done = false;
    let cancel: (() => void) | void;
    // Method shorthand, not `const f = () =>`: under tsx, every named arrow
    // made per call also pays for a `name` property definition (keepNames).
    const { finish, onAbort, ended } = {
      finish(err: unknown, res?: AnyUnaryResponse): void {
        if (done) return;
        done = true;
        if (timer) clearTimeout(timer);
        signal.removeEventListener("abort", onAbort);
        if (err) {
          cancel?.();
          reject(ConnectError.from(err));
        } else resolve(res!);
      },
      onAbort(): void {
        finish(new ConnectError("the operation was aborted", Code.Canceled));
      },
      ended(): boolean {
        return done;
      },
    };
    if (signal !== NEVER) {
      if (signal.aborted) return onAbort();
      signal.addEventListener("abort", onAbort);
    }
    if (timeoutMs !== undefined) timer = setTimeout(() => finish(new ConnectError(`the operation timed out after ${timeoutMs} ms`, Code.DeadlineExceeded)), timeoutMs);
    cancel = start(finish, ended);
  });
}

export function createLeanTransport(opts: LeanTransportOptions): Transport {
  const base = opts.baseUrl.replace(/\/+$/, "");
  const basePath = new URL(base).pathname.replace(/\/+$/, "");
  const readMax = opts.readMaxBytes ?? 0xffffffff;
  let turn = 0;

  function send(req: AnyUnaryRequest, timeoutMs: number | undefined): Promise<AnyUnaryResponse> {
    const method = req.method;
    const path = `${basePath}/${method.parent.typeName}/${method.name}`;
    const here = inProcessEndpoint(base);
    if (here) {
      const answer = here.call({ path, url: req.url, header: req.header, message: req.message, timeoutMs, signal: req.signal });
      if (answer) return settle(req, timeoutMs, answer);
    }
    const body = toBinary(method.input, req.message);
    const outgoing: http2.OutgoingHttpHeaders = {
      "content-type": "application/proto",
      "connect-protocol-version": "1",
      "user-agent": "connect-es/2.1.2",
    };
    req.header.forEach((v, k) => {
      outgoing[k] = v;
    });
    if (timeoutMs !== undefined) outgoing["connect-timeout-ms"] = String(timeoutMs);
    outgoing["content-length"] = String(body.byteLength);
    const manager = opts.sessions[turn++ % opts.sessions.length];

    return callWithin(req.signal, timeoutMs, (finish, ended) => {
      let stream: http2.ClientHttp2Stream | undefined;
      manager.request("POST", path, outgoing, {}).then(
        (s) => {
          stream = s;
          if (ended()) {
            s.close(8 /* NGHTTP2_CANCEL */);
            return;
          }
          let status = 0;
          let raw: http2.IncomingHttpHeaders | undefined;
          const chunks: Buffer[] = [];
          let size = 0;
          s.on("response", (h) => {
            status = Number(h[":status"]);
            raw = h;
          });
          s.on("data", (chunk: Buffer) => {
            manager.notifyResponseByteRead(s);
            size += chunk.length;
            if (size > readMax) return finish(new ConnectError(`message size ${size} is larger than configured readMaxBytes ${readMax}`, Code.ResourceExhausted));
            chunks.push(chunk);
          });
          s.on("error", (e) => finish(e instanceof ConnectError ? e : new ConnectError(`HTTP/2 stream failed: ${e.message}`, Code.Unavailable)));
          s.on("end", () => {
            if (!raw) return finish(new ConnectError("HTTP/2 stream ended without a response", Code.Unavailable));
            const bytes = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size);
            const contentType = firstValue(raw["content-type"]) ?? "";
            const encoding = firstValue(raw["content-encoding"]);
            if (encoding && encoding !== "identity") return finish(new ConnectError(`unsupported response encoding "${encoding}"`, Code.Internal, headersFrom(raw)[0]));
            if (status !== 200) {
              const [header, trailer] = headersFrom(raw);
              const fallback = new ConnectError(`HTTP ${status}`, codeFromHttpStatus(status), header);
              if (!contentType.startsWith("application/json")) return finish(fallback);
              const metadata = new Headers(header);
              trailer.forEach((v, k) => metadata.append(k, v));
              return finish(errorFromJsonBytes(bytes, metadata, fallback));
            }
            if (!PROTO_TYPE.test(contentType)) return finish(new ConnectError(`unsupported content type ${contentType}`, Code.Internal, headersFrom(raw)[0]));
            let message;
            try {
              message = fromBinary(method.output, bytes);
            } catch (e) {
              return finish(new ConnectError(`parse binary: ${(e as Error).message}`, Code.Internal));
            }
            finish(undefined, new LeanResponse(method.parent, method as AnyUnaryResponse["method"], message, raw) as AnyUnaryResponse);
          });
          s.end(body);
        },
        (e: unknown) => finish(e instanceof ConnectError ? e : new ConnectError(`connection failed: ${(e as Error).message}`, Code.Unavailable)),
      );
      return () => {
        if (stream && !stream.closed) stream.close(8 /* NGHTTP2_CANCEL */);
      };
    });
  }

  /**
   * The answer of a server in this process, with the same deadline and abort
   * behaviour as a call on the wire: the caller stops waiting when either
   * fires, and the server's handler sees the abort through its signal.
   */
  function settle(req: AnyUnaryRequest, timeoutMs: number | undefined, answer: Promise<InProcessAnswer>): Promise<AnyUnaryResponse> {
    const method = req.method as AnyUnaryResponse["method"];
    // Method shorthand, not `const decode = (a) =>`: a named arrow made per call pays tsx's __name() (2.7% of a read's busy time in a profile).
    const { decode } = {
      decode(a: InProcessAnswer): AnyUnaryResponse {
        return new LocalResponse(method.parent, method, a.message as AnyUnaryResponse["message"], a.header, a.trailer) as AnyUnaryResponse;
      },
    };
    if (timeoutMs === undefined && req.signal === NEVER) return answer.then(decode);
    return callWithin(req.signal, timeoutMs, (finish) => {
      answer.then(
        (a) => finish(undefined, decode(a)),
        (e: unknown) => finish(e),
      );
    });
  }

  // Same order as Connect: the first interceptor is the outermost.
  type UnaryFn = (req: AnyUnaryRequest) => Promise<AnyUnaryResponse>;
  const chainFor = (timeoutMs: number | undefined) =>
    opts.interceptors.reduceRight<UnaryFn>((next, i) => i(next as Parameters<Interceptor>[0]) as unknown as UnaryFn, (req) => send(req, timeoutMs));
  const plain = chainFor(undefined);
  const chains = new Map<number, UnaryFn>();
  const chain = (timeoutMs: number | undefined) => {
    if (timeoutMs === undefined) return plain;
    let c = chains.get(timeoutMs);
    if (!c) {
      c = chainFor(timeoutMs);
      if (chains.size < 64) chains.set(timeoutMs, c);
    }
    return c;
  };

  return {
    async unary<I extends DescMessage, O extends DescMessage>(
      method: DescMethodUnary<I, O>,
      signal: AbortSignal | undefined,
      timeoutMs: number | undefined,
      header: HeadersInit | undefined,
      input: MessageInitShape<I>,
      contextValues?: ContextValues,
    ): Promise<UnaryResponse<I, O>> {
      const t = timeoutMs === undefined ? opts.defaultTimeoutMs : timeoutMs <= 0 ? undefined : timeoutMs;
      const message = (input as { $typeName?: string }).$typeName === method.input.typeName ? input : create(method.input, input);
      const req: AnyUnaryRequest = {
        stream: false,
        service: method.parent,
        method: method as unknown as AnyUnaryRequest["method"],
        requestMethod: "POST",
        url: `${base}/${method.parent.typeName}/${method.name}`,
        header: new Headers(header),
        contextValues: contextValues ?? createContextValues(),
        message: message as AnyUnaryRequest["message"],
        signal: signal ?? NEVER,
      };
      return (await chain(t)(req)) as unknown as UnaryResponse<I, O>;
    },
    stream: (...args) => opts.fallback.stream(...args),
  };
}
