// Ctrl-C under steady keep-alive traffic: every request a client sent is
// answered in full; the only other outcome allowed is a connection refused
// once the listener is gone (the request never left the client). Several
// keep-alive clients send reads back to back and creates whose bodies arrive
// slowly, on the embedded default and through the full stack's gateway.
import { expect } from "chai";
import { mkdtemp, rm } from "node:fs/promises";
import http from "node:http";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { logger } from "../../lib/log.js";
import { httpDrain, stopListening } from "../../lib/net/http-drain.js";
import { startRpcServer } from "../../lib/rpc/server.js";
import { keepAliveTraffic, type TrafficResult } from "../support/keepalive-traffic.js";
import { runEmbeddedScript, runScript, waitGone, type Script } from "../support/process-tree.js";
import { requireMongo, requireNats } from "../support/servers.js";
import { sleep } from "../support/wait.js";
import { prepareTestStack, TOKENS, type TestStackRun } from "./stack-harness.js";

const TOKEN = "keepalive-full-0123456789";

/** Traffic for a while, SIGINT to the script's process group (a terminal's Ctrl-C), traffic until everything exited. */
async function ctrlCUnderTraffic(script: Script, url: string, token: string): Promise<{ result: TrafficResult; stopMs: number }> {
  const procs = script.tree();
  const traffic = keepAliveTraffic(url, { token, agents: 6, loops: 3, slowLoops: 1 });
  const warm = Date.now();
  while (traffic.answered() < 200 && Date.now() - warm < 30_000) await sleep(50);
  const sent = Date.now();
  process.kill(-script.pid, "SIGINT");
  const { survivors } = await waitGone(procs.map((p) => p.pid), 30_000);
  const stopMs = Date.now() - sent;
  const result = await traffic.stop();
  expect(survivors, script.tail()).to.deep.equal([]);
  console.log(
    `      ${result.answered} answered (${result.closeAnswers} with Connection: close), ${result.refused} refused at connect, ${result.cut.length} cut` +
      `${result.cut.length ? ` ${JSON.stringify(result.cut.slice(0, 5))}` : ""}; stopped in ${stopMs} ms`,
  );
  return { result, stopMs };
}

/** One raw HTTP/1.1 connection: sends requests, reads answers, notes when the server ends it. */
async function rawConnection(port: number) {
  const socket = net.connect(port, "127.0.0.1");
  await new Promise<void>((resolve, reject) => socket.once("connect", resolve).once("error", reject));
  let buf = "";
  let waiting: (() => void) | undefined;
  socket.setEncoding("utf8");
  socket.on("data", (d: string) => {
    buf += d;
    waiting?.();
  });
  const ended = new Promise<number>((resolve) => socket.once("end", () => resolve(Date.now())));
  return {
    ended,
    /** Resolves with the answer's head once the whole answer ("ok") is in. */
    get(path: string): Promise<string> {
      socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`);
      return new Promise((resolve) => {
        waiting = () => {
          const end = buf.indexOf("\r\n\r\nok");
          if (end < 0) return;
          const head = buf.slice(0, end);
          buf = buf.slice(end + 6);
          waiting = undefined;
          resolve(head);
        };
        waiting();
      });
    },
    close: () => socket.destroy(),
  };
}

describe("draining kept-alive connections (lib/net/http-drain.ts)", () => {
  it("answers requests in flight and new ones on open connections with Connection: close, closes idle ones once quiet, accepts no new connection", async () => {
    const QUIET = 400;
    const server = http.createServer((req, res) => setTimeout(() => res.end("ok"), req.url === "/slow" ? 600 : 0));
    const drain = httpDrain(server, QUIET);
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const port = (server.address() as net.AddressInfo).port;
    const [busy, active, idle] = await Promise.all([rawConnection(port), rawConnection(port), rawConnection(port)]);
    try {
      for (const c of [busy, active, idle]) expect(await c.get("/fast")).to.match(/Connection: keep-alive/i);
      const slow = busy.get("/slow");
      await sleep(100);

      const began = Date.now();
      const DEADLINE = 10_000;
      const stopTimers = drain.begin(DEADLINE);
      const allClosed = new Promise<number>((r) => stopListening(server, () => r(Date.now())));
      // A request on an open connection just after the drain began: answered, and told the connection is done.
      expect(await active.get("/fast")).to.match(/Connection: close/i);
      expect(await slow, "the request in flight is answered").to.match(/^HTTP\/1\.1 200[\s\S]*Connection: close/i);
      const refused = await new Promise<string>((r) => net.connect(port, "127.0.0.1").once("connect", () => r("connected")).once("error", (e: NodeJS.ErrnoException) => r(e.code ?? "")));
      expect(refused).to.equal("ECONNREFUSED");
      // The server ends the connections it answered with Connection: close at once, the idle one once
      // it has been quiet (not sooner), and all of them by the quiet timer rather than the deadline.
      // Only order and lower bounds: a loaded machine delays every timer, never hastens one.
      const activeEnded = (await active.ended) - began;
      const idleEnded = (await idle.ended) - began;
      expect(activeEnded, "the answered connection ends before the idle one").to.be.below(idleEnded);
      expect(idleEnded).to.be.at.least(QUIET - 150).and.below(DEADLINE);
      await busy.ended;
      expect((await allClosed) - began).to.be.below(DEADLINE);
      stopTimers();
    } finally {
      for (const c of [busy, active, idle]) c.close();
    }
  });
});

describe("RPC port: Connect calls on kept-alive HTTP/1.1 connections during close()", () => {
  it("answers every call that was sent", async () => {
    const server = await startRpcServer({ name: "drain-test", services: [], routes: () => undefined, port: 0, log: logger("drain-test") });
    const traffic = keepAliveTraffic(server.url, {
      agents: 4,
      loops: 3,
      slowLoops: 0,
      read: { method: "POST", path: "/grpc.health.v1.Health/Check", headers: { "content-type": "application/json" }, body: "{}" },
    });
    const warm = Date.now();
    while (traffic.answered() < 300 && Date.now() - warm < 30_000) await sleep(20);
    const began = Date.now();
    await server.close();
    const closeMs = Date.now() - began;
    await sleep(200);
    const result = await traffic.stop();
    // close() ends by its own cut-off (lib/rpc/server.ts); a hang would be this test's timeout.
    console.log(`      ${result.answered} answered (${result.closeAnswers} with Connection: close), ${result.refused} refused at connect, ${result.cut.length} cut; closed in ${closeMs} ms`);
    expect(result.cut, "calls sent and never answered").to.deep.equal([]);
  });
});

describe("graceful shutdown under keep-alive traffic", function () {
  this.timeout(300_000);

  it("embedded default (npm start): Ctrl-C cuts no request", async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), "keepalive-embedded-"));
    try {
      const script = runEmbeddedScript(dataDir, { SEED_TOKENS: JSON.stringify([{ token: TOKEN, project: "alpha", scope: "full" }]) });
      const ready = await script.line(/article audio platform ready/, 120_000);
      const { result } = await ctrlCUnderTraffic(script, (JSON.parse(ready) as { url: string }).url, TOKEN);
      expect(result.cut, "requests sent and never answered").to.deep.equal([]);
      expect(result.answered).to.be.greaterThan(200);
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  describe("full stack (npm run stack)", () => {
    let run: TestStackRun | undefined;
    after(async () => run?.cleanup());

    it("Ctrl-C cuts no request at the gateway", async function () {
      const mongoUrl = await requireMongo(this);
      const natsUrl = await requireNats(this);
      run = await prepareTestStack({ mongoUrl, natsUrl, env: { LOG_LEVEL: "warn" } });
      const script = runScript("stack", run.env);
      const ready = await script.line(/article audio stack ready: API at (\S+)\/api/, 180_000);
      const url = /API at (\S+)\/api/.exec(ready)![1];
      const { result } = await ctrlCUnderTraffic(script, url, TOKENS.aFull);
      expect(result.cut, "requests sent and never answered").to.deep.equal([]);
      expect(result.answered).to.be.greaterThan(200);
    });
  });
});
