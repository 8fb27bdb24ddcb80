// The unary fast path (lib/rpc/unary-server.ts) must answer the calls it
// claims (Connect protocol, binary, identity, HTTP/2) itself, with the same
// headers, trailers, errors and deadlines connect-node would give, and leave
// the rest to connect-node. The conformance run (npm run conformance) checks
// the protocol broadly; this pins down which path answered.
import http2 from "node:http2";
import { expect } from "chai";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient, type Client } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { pino } from "pino";
import { startRpcServer, type RpcServer } from "../../lib/rpc/server.js";
import {
  ConformancePayload_RequestInfoSchema,
  ConformanceService,
  UnaryRequestSchema,
  UnaryResponseSchema,
} from "./gen/connectrpc/conformance/v1/service_pb.js";
import { conformanceRegistry, conformanceRoutes } from "./service.js";

const data = new TextEncoder().encode("test response");

describe("rpc fast path (conformance service)", () => {
  let server: RpcServer;
  let binary: Client<typeof ConformanceService>;
  let json: Client<typeof ConformanceService>;

  before(async () => {
    server = await startRpcServer({
      name: "conformance-test",
      services: [ConformanceService.typeName],
      routes: conformanceRoutes,
      log: pino({ level: "silent" }),
      readMaxBytes: 64 * 1024,
      jsonOptions: { registry: conformanceRegistry },
    });
    binary = createClient(ConformanceService, createConnectTransport({ baseUrl: server.url, httpVersion: "2", useBinaryFormat: true }));
    json = createClient(ConformanceService, createConnectTransport({ baseUrl: server.url, httpVersion: "2", useBinaryFormat: false, jsonOptions: { registry: conformanceRegistry } }));
  });
  after(() => server.close());

  /** Runs `call` and returns how many requests each path answered meanwhile. */
  async function servedDuring(call: () => Promise<unknown>) {
    const before = server.served();
    await call();
    const after = server.served();
    return { fastPath: after.fastPath - before.fastPath, connect: after.connect - before.connect };
  }

  it("answers a binary unary call with response headers, trailers and the echoed request itself", async () => {
    let header: Headers | undefined;
    let trailer: Headers | undefined;
    let payload: Awaited<ReturnType<typeof binary.unary>>["payload"];
    const served = await servedDuring(async () => {
      const res = await binary.unary(
        {
          responseDefinition: {
            responseHeaders: [{ name: "x-custom-header", value: ["foo"] }],
            responseTrailers: [{ name: "x-custom-trailer", value: ["bing"] }],
            response: { case: "responseData", value: data },
          },
        },
        { headers: { "x-conformance-test": "value1" }, onHeader: (h) => (header = h), onTrailer: (t) => (trailer = t) },
      );
      payload = res.payload;
    });
    expect(served).to.deep.equal({ fastPath: 1, connect: 0 });
    expect(header?.get("x-custom-header")).to.equal("foo");
    expect(trailer?.get("x-custom-trailer")).to.equal("bing");
    expect(payload?.data).to.deep.equal(data);
    expect(payload?.requestInfo?.requestHeaders.find((h) => h.name === "x-conformance-test")?.value).to.deep.equal(["value1"]);
    expect(payload?.requestInfo?.requests).to.have.length(1);
  });

  it("answers an error with its details, headers and trailers itself", async () => {
    let error: ConnectError | undefined;
    const served = await servedDuring(async () => {
      try {
        await binary.unary({
          responseDefinition: {
            responseHeaders: [{ name: "x-custom-header", value: ["foo"] }],
            responseTrailers: [{ name: "x-custom-trailer", value: ["bing"] }],
            response: { case: "error", value: { code: Code.ResourceExhausted as number, message: "too much" } },
          },
        });
      } catch (e) {
        error = ConnectError.from(e);
      }
    });
    expect(served).to.deep.equal({ fastPath: 1, connect: 0 });
    expect(error?.code).to.equal(Code.ResourceExhausted);
    expect(error?.rawMessage).to.equal("too much");
    expect(error?.metadata.get("x-custom-header")).to.equal("foo");
    expect(error?.metadata.get("x-custom-trailer")).to.equal("bing");
    const [info] = error?.findDetails(ConformancePayload_RequestInfoSchema) ?? [];
    expect(info?.requests).to.have.length(1);
  });

  it("ends a call at its connect-timeout-ms deadline and echoes the timeout it saw", async () => {
    const session = http2.connect(server.url);
    try {
      const post = (timeoutMs: number, delayMs: number) =>
        new Promise<{ status: number; body: Buffer; ms: number }>((resolve, reject) => {
          const started = Date.now();
          const req = session.request({
            ":method": "POST",
            ":path": "/connectrpc.conformance.v1.ConformanceService/Unary",
            "content-type": "application/proto",
            "connect-protocol-version": "1",
            "connect-timeout-ms": String(timeoutMs),
          });
          const chunks: Buffer[] = [];
          let status = 0;
          req.on("response", (h) => (status = Number(h[":status"])));
          req.on("data", (c: Buffer) => chunks.push(c));
          req.on("end", () => resolve({ status, body: Buffer.concat(chunks), ms: Date.now() - started }));
          req.on("error", reject);
          req.end(toBinary(UnaryRequestSchema, create(UnaryRequestSchema, { responseDefinition: { responseDelayMs: delayMs } })));
        });
      const before = server.served();
      const DELAY_MS = 20_000;
      const late = await post(300, DELAY_MS);
      expect(late.status).to.equal(504);
      expect(JSON.parse(late.body.toString()).code).to.equal("deadline_exceeded");
      // The server gave up at the deadline, not after the delay (what the bound tells apart; no speed target).
      expect(late.ms).to.be.below(DELAY_MS);
      const inTime = await post(30_000, 0);
      expect(inTime.status).to.equal(200);
      const echoed = Number(fromBinary(UnaryResponseSchema, inTime.body).payload?.requestInfo?.timeoutMs);
      expect(echoed).to.be.within(1, 30_000);
      expect(server.served().fastPath - before.fastPath).to.equal(2);
    } finally {
      session.close();
    }
  });

  it("rejects a body over the receive limit itself", async () => {
    let error: ConnectError | undefined;
    const served = await servedDuring(async () => {
      try {
        await binary.unary({ requestData: new Uint8Array(100 * 1024) });
      } catch (e) {
        error = ConnectError.from(e);
      }
    });
    expect(served).to.deep.equal({ fastPath: 1, connect: 0 });
    expect(error?.code).to.equal(Code.ResourceExhausted);
  });

  it("leaves JSON and streams to connect-node", async () => {
    const served = await servedDuring(async () => {
      const res = await json.unary({ responseDefinition: { response: { case: "responseData", value: data } } });
      expect(res.payload?.data).to.deep.equal(data);
      for await (const _ of binary.serverStream({ responseDefinition: { responseData: [data] } })) void _;
    });
    expect(served).to.deep.equal({ fastPath: 0, connect: 2 });
  });
});
