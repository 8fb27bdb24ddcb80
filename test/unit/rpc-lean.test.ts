// The lean unary path (lib/rpc/unary.ts, lib/rpc/unary-server.ts) must be
// indistinguishable from Connect's generic one: same answers, same errors
// with their metadata, deadlines, headers and trailers, interceptors on both
// ends, and plain gRPC / Connect JSON clients still served by the same port.
// The suite runs twice: over the socket, and with the server in this process
// (lib/rpc/in-process.ts), where the same client skips the socket.
import { expect } from "chai";
import { Code, ConnectError, createClient, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { AuthService, Scope } from "../../gen/auth/v1/auth_pb.js";
import { PlayerService } from "../../gen/auth/v1/player_pb.js";
import { Health, HealthCheckResponse_ServingStatus } from "../../gen/grpc/health/v1/health_pb.js";
import { logger } from "../../lib/log.js";
import { closeRpcClients, rpcClient } from "../../lib/rpc/client.js";
import { inProcessEndpoint } from "../../lib/rpc/in-process.js";
import { startRpcServer, type RpcServer } from "../../lib/rpc/server.js";

/** How long the handler takes for the token "slow": far beyond the deadline the caller sets. */
const SLOW_HANDLER_MS = 2_000;

for (const inProcess of [false, true]) describe(`RPC: lean unary path${inProcess ? ", server in this process" : ", over HTTP/2"}`, () => {
  let server: RpcServer;
  const seen: string[] = [];
  const cancelled: string[] = [];

  before(async () => {
    server = await startRpcServer({
      name: "lean-test",
      services: [AuthService.typeName],
      log: logger("test"),
      inProcess,
      routes(router) {
        router.service(AuthService, {
          async authenticate(req, ctx) {
            seen.push(ctx.requestHeader.get("x-probe") ?? "");
            if (req.token === "slow") await new Promise((r) => setTimeout(r, SLOW_HANDLER_MS));
            if (req.token.startsWith("wait-")) {
              await new Promise<void>((resolve) => ctx.signal.addEventListener("abort", () => resolve(), { once: true }));
              cancelled.push(req.token);
              throw new ConnectError("cancelled", Code.Canceled);
            }
            if (req.token === "bad") throw new ConnectError("token rejected", Code.Unauthenticated, { "x-why": "revoked" });
            if (req.token === "boom") throw new Error("secret internal detail");
            ctx.responseHeader.set("x-answer", "yes");
            ctx.responseTrailer.set("x-done", "1");
            return { projectId: `p-${req.token}`, scope: Scope.READ, tokenId: `remaining ${ctx.timeoutMs() ?? "none"}` };
          },
        });
      },
    });
  });
  after(async () => {
    closeRpcClients();
    await server.close();
  });

  const generic = () => createClient(AuthService, createConnectTransport({ baseUrl: server.url, httpVersion: "2", useBinaryFormat: false }));

  it("answers with the message, response headers and trailers", async () => {
    const client = rpcClient(AuthService, server.url);
    let header: Headers | undefined;
    let trailer: Headers | undefined;
    const res = await client.authenticate({ token: "abc" }, { onHeader: (h) => (header = h), onTrailer: (t) => (trailer = t) });
    expect(res.projectId).to.equal("p-abc");
    expect(res.scope).to.equal(Scope.READ);
    expect(header?.get("x-answer")).to.equal("yes");
    expect(trailer?.get("x-done")).to.equal("1");
    // The client's default deadline reaches the handler.
    expect(Number(res.tokenId.split(" ")[1])).to.be.within(1, 30_000);
  });

  it("reports errors exactly as Connect's generic path does, metadata included", async () => {
    const errOf = async (fn: () => Promise<unknown>) => {
      try {
        await fn();
      } catch (e) {
        return ConnectError.from(e);
      }
      throw new Error("expected a rejection");
    };
    const lean = await errOf(() => rpcClient(AuthService, server.url).authenticate({ token: "bad" }));
    const viaConnect = await errOf(() => generic().authenticate({ token: "bad" }));
    expect([lean.code, lean.rawMessage, lean.metadata.get("x-why")]).to.deep.equal([Code.Unauthenticated, "token rejected", "revoked"]);
    expect([viaConnect.code, viaConnect.rawMessage, viaConnect.metadata.get("x-why")]).to.deep.equal([lean.code, lean.rawMessage, "revoked"]);

    const internal = await errOf(() => rpcClient(AuthService, server.url).authenticate({ token: "boom" }));
    expect(internal.code).to.equal(Code.Internal);
    expect(internal.message).to.not.include("secret");
  });

  it("gives up at the caller's deadline", async () => {
    const started = Date.now();
    try {
      await rpcClient(AuthService, server.url).authenticate({ token: "slow" }, { timeoutMs: 60 });
      expect.fail("should time out");
    } catch (e) {
      expect(ConnectError.from(e).code).to.equal(Code.DeadlineExceeded);
    }
    // At its own 60 ms deadline, not when the handler answers (what the bound tells apart: timers on a
    // loaded machine run late by tens of milliseconds, not by seconds).
    expect(Date.now() - started).to.be.below(SLOW_HANDLER_MS);
  });

  it("lets the handler see the caller give up", async () => {
    const ac = new AbortController();
    const call = rpcClient(AuthService, server.url).authenticate({ token: "wait-1" }, { signal: ac.signal });
    setTimeout(() => ac.abort(), 50);
    const err = await call.then(
      () => undefined,
      (e: unknown) => ConnectError.from(e),
    );
    expect(err?.code).to.equal(Code.Canceled);
    for (let i = 0; i < 50 && !cancelled.includes("wait-1"); i++) await new Promise((r) => setTimeout(r, 10));
    expect(cancelled).to.include("wait-1");
  });

  it(inProcess ? "is reachable in-process only while it runs" : "is not offered in-process unless asked", async () => {
    expect(inProcessEndpoint(server.url) !== undefined).to.equal(inProcess);
    if (!inProcess) return;
    const other = await startRpcServer({ name: "short-lived", services: [], log: logger("test"), inProcess: true, routes: () => undefined });
    expect(inProcessEndpoint(other.url)).to.not.equal(undefined);
    await other.close();
    expect(inProcessEndpoint(other.url)).to.equal(undefined);
  });

  it("runs interceptors on the client and forwards their headers", async () => {
    const probe: Interceptor = (next) => (req) => {
      req.header.set("x-probe", "from-interceptor");
      return next(req);
    };
    await rpcClient(AuthService, server.url, { interceptors: [probe] }).authenticate({ token: "i" });
    expect(seen.at(-1)).to.equal("from-interceptor");
  });

  it("still serves plain gRPC and Connect JSON clients on the same port", async () => {
    const grpc = createClient(AuthService, createGrpcTransport({ baseUrl: server.url }));
    expect((await grpc.authenticate({ token: "g" })).projectId).to.equal("p-g");
    expect((await generic().authenticate({ token: "j" })).projectId).to.equal("p-j");
    const grpcErr = await grpc.authenticate({ token: "bad" }).catch((e: unknown) => ConnectError.from(e));
    expect((grpcErr as ConnectError).code).to.equal(Code.Unauthenticated);
  });

  it("keeps server streams working through the same client", async () => {
    const health = rpcClient(Health, server.url);
    const ac = new AbortController();
    for await (const s of health.watch({ service: AuthService.typeName }, { signal: ac.signal })) {
      expect(s.status).to.equal(HealthCheckResponse_ServingStatus.SERVING);
      ac.abort();
      break;
    }
    expect((await health.check({ service: "nope.Unknown" })).status).to.equal(HealthCheckResponse_ServingStatus.SERVICE_UNKNOWN);
  });
});

describe("RPC: lean unary path with several services on one server", () => {
  let server: RpcServer;
  after(async () => {
    closeRpcClients();
    await server?.close();
  });

  it("serves every service of a chained router.service(...).service(...) on the lean path, not only the first", async () => {
    server = await startRpcServer({
      name: "lean-chained",
      services: [AuthService.typeName, PlayerService.typeName],
      log: logger("test"),
      inProcess: true,
      routes: (router) =>
        router
          .service(AuthService, { authenticate: async () => ({ projectId: "p", scope: Scope.READ, tokenId: "t" }) })
          .service(PlayerService, { getPlayer: async () => ({}) }),
    });
    const endpoint = inProcessEndpoint(server.url)!;
    const call = (path: string) => endpoint.call({ path, url: server.url + path, header: new Headers(), message: {} as never, timeoutMs: 1000, signal: new AbortController().signal });
    expect(call("/auth.v1.AuthService/Authenticate")).to.not.equal(undefined);
    expect(call("/auth.v1.PlayerService/GetPlayer")).to.not.equal(undefined);
  });
});
