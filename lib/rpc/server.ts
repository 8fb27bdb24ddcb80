// Starts one Connect server: gRPC, gRPC-Web and Connect on a single port,
// HTTP/2 (h2c) and HTTP/1.1 side by side, plus grpc.health.v1.Health.
import http from "node:http";
import http2 from "node:http2";
import net from "node:net";
import { Duplex } from "node:stream";
import type { ConnectRouter, Interceptor } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { create } from "@bufbuild/protobuf";
import { Health, HealthCheckResponse_ServingStatus, HealthCheckResponseSchema } from "../../gen/grpc/health/v1/health_pb.js";
import type { Logger } from "../log.js";

const HTTP2_PREFACE = Buffer.from("PRI * HTTP/2.0");

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
}

export interface RpcServer {
  readonly port: number;
  readonly url: string;
  /** Flip readiness, e.g. to drain before shutdown. */
  setServing(serving: boolean): void;
  close(): Promise<void>;
}

/** A duplex over `socket` whose reads start with what was already read from it. */
function replaying(socket: net.Socket): Duplex {
  const wrapper = new Duplex({
    read() {
      socket.resume();
    },
    write(chunk, encoding, callback) {
      socket.write(chunk, encoding, callback);
    },
    final(callback) {
      socket.end(callback);
    },
    destroy(err, callback) {
      socket.destroy(err ?? undefined);
      callback(err);
    },
  });
  socket.on("data", (data) => {
    if (!wrapper.push(data)) socket.pause();
  });
  socket.on("end", () => wrapper.push(null));
  socket.on("close", () => wrapper.destroy());
  socket.on("error", (err) => wrapper.destroy(err));
  return wrapper;
}

export async function startRpcServer(opts: RpcServerOptions): Promise<RpcServer> {
  let serving = true;
  const watchers = new Set<() => void>();
  const statusOf = (service: string) => {
    if (service !== "" && !opts.services.includes(service)) return HealthCheckResponse_ServingStatus.SERVICE_UNKNOWN;
    return serving ? HealthCheckResponse_ServingStatus.SERVING : HealthCheckResponse_ServingStatus.NOT_SERVING;
  };

  const handler = connectNodeAdapter({
    grpc: true,
    grpcWeb: true,
    connect: true,
    interceptors: opts.interceptors,
    readMaxBytes: opts.readMaxBytes ?? 32 * 1024 * 1024,
    routes(router) {
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

  const h2 = http2.createServer({}, handler);
  const h1 = http.createServer(handler);
  h1.keepAliveTimeout = 65_000;
  const sockets = new Set<net.Socket>();
  // One port for both protocols: look at the first bytes of each connection
  // and hand it to the HTTP/2 server (prior knowledge) or the HTTP/1.1 one.
  const front = net.createServer((socket) => {
    sockets.add(socket);
    // Small RPC frames must not wait for Nagle + delayed ACK (~40 ms per call).
    socket.setNoDelay(true);
    socket.once("close", () => sockets.delete(socket));
    socket.once("data", (chunk) => {
      socket.pause();
      socket.unshift(chunk);
      const isH2 = chunk.length >= HTTP2_PREFACE.length ? chunk.subarray(0, HTTP2_PREFACE.length).equals(HTTP2_PREFACE) : HTTP2_PREFACE.subarray(0, chunk.length).equals(chunk);
      // The HTTP/2 server reads from the native handle and would miss the
      // unshifted preface, so it gets a JS stream that replays it.
      if (isH2) h2.emit("connection", replaying(socket));
      else h1.emit("connection", socket);
      socket.resume();
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
  opts.log.info({ url, services: opts.services }, `${opts.name} listening`);

  return {
    port,
    url,
    setServing(v: boolean) {
      serving = v;
      for (const w of [...watchers]) w();
    },
    async close() {
      serving = false;
      for (const w of [...watchers]) w();
      await new Promise<void>((resolve) => {
        front.close(() => resolve());
        // Idle keep-alive connections would hold close() open; in-flight
        // calls get a short grace period first.
        setTimeout(() => {
          for (const s of sockets) s.destroy();
        }, 2_000).unref();
        h1.closeIdleConnections();
        for (const s of sockets) if (s.readableLength === 0 && !s.writableLength) s.end();
      });
    },
  };
}
