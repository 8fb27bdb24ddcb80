// Starts one Connect server: gRPC, gRPC-Web and Connect on a single port,
// HTTP/2 (h2c) and HTTP/1.1 side by side, plus grpc.health.v1.Health.
import http from "node:http";
import http2 from "node:http2";
import net from "node:net";
import type { ConnectRouter, Interceptor } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { create, type JsonReadOptions, type JsonWriteOptions } from "@bufbuild/protobuf";
import { Health, HealthCheckResponse_ServingStatus, HealthCheckResponseSchema } from "../../gen/grpc/health/v1/health_pb.js";
import type { Logger } from "../log.js";
import { httpDrain } from "../net/http-drain.js";
import { rpcServerMetrics } from "./metrics.js";
import { requestIdServerInterceptor } from "./request-id.js";
import { joinInProcess } from "./in-process.js";
import { storageErrorInterceptor } from "./storage-errors.js";
import { createLeanUnaryServer } from "./unary-server.js";

const HTTP2_PREFACE = Buffer.from("PRI * HTTP/2.0");
/** Callers are stopped first (gateway, then workers), so calls still in flight at close are short. */
const CLOSE_CUTOFF_MS = 2_000;

export interface RpcServerOptions {
  name: string;
  /** Fully-qualified service names reported by the health service. */
  services: string[];
  routes: (router: ConnectRouter) => void;
  host?: string;
  /** 0 picks a free port. */
  port?: number;
  log: Logger;
  interceptors?: Interceptor[];
  readMaxBytes?: number;
  /** Clients in this process call it without the socket (see in-process.ts). */
  inProcess?: boolean;
  /** For the JSON codec, e.g. a registry for the `Any` types messages carry. */
  jsonOptions?: Partial<JsonReadOptions & JsonWriteOptions>;
}

/** Requests that arrived over the socket, by the path that answered them. */
export interface RpcServedCounts {
  /** Unary Connect-binary calls over HTTP/2 answered by the fast path (unary-server.ts). */
  fastPath: number;
  /** Everything connect-node answered: other protocols, codecs, compression, streams, HTTP/1.1. */
  connect: number;
}

export interface RpcServer {
  readonly port: number;
  readonly url: string;
  /** Flip readiness, e.g. to drain before shutdown. */
  setServing(serving: boolean): void;
  /** Which path answered how many requests so far; tests and the conformance run read it. */
  served(): RpcServedCounts;
  close(): Promise<void>;
}

export async function startRpcServer(opts: RpcServerOptions): Promise<RpcServer> {
  let serving = true;
  const watchers = new Set<() => void>();
  const statusOf = (service: string) => {
    if (service !== "" && !opts.services.includes(service)) return HealthCheckResponse_ServingStatus.SERVICE_UNKNOWN;
    return serving ? HealthCheckResponse_ServingStatus.SERVING : HealthCheckResponse_ServingStatus.NOT_SERVING;
  };

  // Outermost first: the request id and timing see the final status code; a
  // store's failure is named (innermost) before a service's own error hiding sees it.
  const interceptors = [requestIdServerInterceptor(), rpcServerMetrics(), ...(opts.interceptors ?? []), storageErrorInterceptor()];
  const readMaxBytes = opts.readMaxBytes ?? 32 * 1024 * 1024;
  // Internal unary calls skip Connect's generic handler (see unary-server.ts).
  const lean = createLeanUnaryServer({ interceptors, readMaxBytes });
  const handler = connectNodeAdapter({
    grpc: true,
    grpcWeb: true,
    connect: true,
    interceptors,
    readMaxBytes,
    jsonOptions: opts.jsonOptions,
    routes(connectRouter) {
      const router = lean.capture(connectRouter);
      opts.routes(router);
      router.service(Health, {
        check(req) {
          return { status: statusOf(req.service) };
        },
        list() {
          const statuses: Record<string, ReturnType<typeof create<typeof HealthCheckResponseSchema>>> = {};
          for (const s of ["", ...opts.services]) statuses[s] = create(HealthCheckResponseSchema, { status: statusOf(s) });
          return { statuses };
        },
        async *watch(req, ctx) {
          let last: HealthCheckResponse_ServingStatus | undefined;
          while (!ctx.signal.aborted) {
            const now = statusOf(req.service);
            if (now !== last) {
              last = now;
              yield { status: now };
            }
            await new Promise<void>((resolve) => {
              const wake = () => {
                watchers.delete(wake);
                resolve();
              };
              watchers.add(wake);
              ctx.signal.addEventListener("abort", wake, { once: true });
            });
          }
        },
      });
    },
  });

  const counts: RpcServedCounts = { fastPath: 0, connect: 0 };
  const h2 = http2.createServer({}, (req, res) => {
    // A request answered before its body was read (415, a size limit) still
    // has to be read to its end: an HTTP/2 stream left half-open keeps some
    // clients (Go's) waiting for it to close.
    res.once("finish", () => {
      if (!req.readableEnded) req.resume();
    });
    if (lean.handle(req, res)) counts.fastPath++;
    else {
      counts.connect++;
      void handler(req, res);
    }
  });
  // HTTP/2 connections are closed with GOAWAY on shutdown, which lets their
  // in-flight calls finish; ending the raw socket would cut them.
  const h2Sessions = new Set<http2.ServerHttp2Session>();
  let closing = false;
  h2.on("session", (session) => {
    h2Sessions.add(session);
    session.once("close", () => h2Sessions.delete(session));
    if (closing) session.close();
  });
  const h1 = http.createServer((req, res) => {
    res.once("finish", () => {
      if (!req.readableEnded) req.resume();
    });
    counts.connect++;
    void handler(req, res);
  });
  h1.keepAliveTimeout = 65_000;
  // HTTP/1.1 keep-alive connections close without cutting a call (http-drain.ts).
  const h1Drain = httpDrain(h1);
  const sockets = new Set<net.Socket>();
  const classified = new WeakSet<net.Socket>();
  // One port for both protocols: look at the first bytes of each connection
  // and hand it to the HTTP/2 server (prior knowledge) or the HTTP/1.1 one.
  const front = net.createServer((socket) => {
    sockets.add(socket);
    // Small RPC frames must not wait for Nagle + delayed ACK (~40 ms per call).
    socket.setNoDelay(true);
    socket.once("close", () => sockets.delete(socket));
    socket.once("data", (chunk) => {
      classified.add(socket);
      socket.pause();
      socket.unshift(chunk);
      const isH2 = chunk.length >= HTTP2_PREFACE.length ? chunk.subarray(0, HTTP2_PREFACE.length).equals(HTTP2_PREFACE) : HTTP2_PREFACE.subarray(0, chunk.length).equals(chunk);
      // The HTTP/2 session keeps the native socket (a JS stream wrapper costs
      // ~30% more CPU per call) and reads the unshifted preface from the
      // socket's buffer itself on the next tick, so the socket stays paused:
      // resuming would hand those bytes to nobody.
      if (isH2) {
        h2.emit("connection", socket);
      } else {
        h1.emit("connection", socket);
        socket.resume();
      }
    });
    socket.on("error", () => socket.destroy());
  });
  front.on("error", (e) => opts.log.error({ err: e }, "rpc listener error"));

  const host = opts.host ?? "127.0.0.1";
  await new Promise<void>((resolve, reject) => {
    front.once("error", reject);
    front.listen(opts.port ?? 0, host, () => {
      front.off("error", reject);
      resolve();
    });
  });
  const port = (front.address() as net.AddressInfo).port;
  const url = `http://${host.includes(":") ? `[${host}]` : host}:${port}`;
  const leave = opts.inProcess ? joinInProcess(url, lean) : () => undefined;
  opts.log.info({ url, services: opts.services }, `${opts.name} listening`);

  return {
    port,
    url,
    setServing(v: boolean) {
      serving = v;
      for (const w of [...watchers]) w();
    },
    served: () => ({ ...counts }),
    async close() {
      leave();
      serving = false;
      closing = true;
      for (const w of [...watchers]) w();
      await new Promise<void>((resolve) => {
        // Connections that have not sent a byte yet are drained like idle HTTP/1.1 ones.
        for (const s of sockets) if (!classified.has(s)) h1Drain.track(s);
        const drained = h1Drain.begin(CLOSE_CUTOFF_MS);
        // In-flight calls get a short grace period; then whatever is open goes.
        const cutoff = setTimeout(() => {
          for (const s of sockets) s.destroy();
        }, CLOSE_CUTOFF_MS);
        cutoff.unref();
        front.close(() => {
          drained();
          clearTimeout(cutoff);
          resolve();
        });
        for (const session of h2Sessions) session.close();
      });
    },
  };
}
