import net from "node:net";
import { expect } from "chai";
import { ArticlesService } from "../../gen/articles/v1/articles_pb.js";
import { logger } from "../../lib/log.js";
import { startRpcServer, type RpcServer } from "../../lib/rpc/server.js";
import { startGateway } from "../../gateway/app.js";
import { expectNoStall } from "../support/bystander.js";
import { MemoryBlobs, startHarness, type Harness } from "./support.js";

async function deadUrl(): Promise<string> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return `http://127.0.0.1:${port}`;
}

describe("gateway: health probes", function () {
  let h: Harness;
  let auth: RpcServer;
  before(async () => {
    auth = await startRpcServer({ name: "fake-auth", services: ["auth.v1.AuthService"], routes: () => undefined, port: 0, log: logger("gateway-test") });
    h = await startHarness();
  });
  after(async () => {
    await h.close();
    await auth.close();
  });

  async function gatewayWith(targets: { name: string; url: string }[]) {
    return startGateway({ articlesUrl: h.upstream.url, healthTargets: targets, blobs: new MemoryBlobs(), log: logger("gateway-test"), drainMs: 500 });
  }

  it("/healthz is 200 when every target is SERVING", async () => {
    const gw = await gatewayWith([
      { name: "auth", url: auth.url },
      { name: "articles", url: h.upstream.url },
    ]);
    try {
      const res = await fetch(`${gw.url}/healthz`);
      expect(res.status).to.equal(200);
      expect(await res.json()).to.deep.equal({ result: "ok", services: { auth: "SERVING", articles: "SERVING" } });
      expect((await fetch(`${gw.url}/readyz`)).status).to.equal(200);
    } finally {
      await gw.close();
    }
  });

  it("/healthz is 503 within about a second when a target is down", async () => {
    const gw = await gatewayWith([
      { name: "articles", url: h.upstream.url },
      { name: "audio", url: await deadUrl() },
    ]);
    const up = await gatewayWith([{ name: "articles", url: h.upstream.url }]);
    try {
      // The reference: the same probe with every target up, on the same (maybe loaded) machine.
      let started = performance.now();
      expect((await fetch(`${up.url}/healthz`)).status).to.equal(200);
      const reference = performance.now() - started;
      started = performance.now();
      const res = await fetch(`${gw.url}/healthz`);
      // At most the check's one-second deadline (gateway/routes/health.ts) and scheduling: no retries, no backoff.
      expectNoStall("/healthz with a target down", performance.now() - started, reference, { slackMs: 2_500 });
      expect(res.status).to.equal(503);
      const body = await res.json();
      expect(body.result).to.equal("error");
      expect(body.services.articles).to.equal("SERVING");
      expect(body.services.audio).to.not.equal("SERVING");
      expect((await fetch(`${gw.url}/readyz`)).status).to.equal(503);
      expect((await fetch(`${gw.url}/livez`)).status).to.equal(200);
    } finally {
      await gw.close();
      await up.close();
    }
  });

  it("/healthz is 503 when a target reports NOT_SERVING", async () => {
    const draining = await startRpcServer({ name: "draining", services: [ArticlesService.typeName], routes: () => undefined, port: 0, log: logger("gateway-test") });
    const gw = await gatewayWith([{ name: "articles", url: draining.url }]);
    try {
      expect((await fetch(`${gw.url}/healthz`)).status).to.equal(200);
      draining.setServing(false);
      const res = await fetch(`${gw.url}/healthz`);
      expect(res.status).to.equal(503);
      expect((await res.json()).services).to.deep.equal({ articles: "NOT_SERVING" });
    } finally {
      await gw.close();
      await draining.close();
    }
  });

  it("/readyz turns 503 when the gateway stops serving, /livez stays 200", async () => {
    expect((await fetch(h.url("/readyz"))).status).to.equal(200);
    h.gateway.setServing(false);
    try {
      const res = await fetch(h.url("/readyz"));
      expect(res.status).to.equal(503);
      expect(await res.json()).to.include({ result: "error" });
      expect((await fetch(h.url("/livez"))).status).to.equal(200);
    } finally {
      h.gateway.setServing(true);
    }
  });

  it("close() lets an in-flight request finish and then refuses new connections", async () => {
    const p = await startHarness();
    const key = "slow/1/full.mp3";
    await p.blobs.put(key, Buffer.alloc(16 * 1024, 1), "audio/mpeg");
    p.blobs.chunkDelayMs = 20; // 16 chunks: the download takes ~300 ms
    const res = await fetch(p.url(`/audio/${key}`));
    const started = Date.now();
    const closing = p.gateway.close();
    const body = Buffer.from(await res.arrayBuffer());
    expect(body.length).to.equal(16 * 1024);
    await closing;
    expect(Date.now() - started).to.be.at.least(200);
    let refused = false;
    try {
      await fetch(p.url("/livez"));
    } catch {
      refused = true;
    }
    expect(refused).to.equal(true);
    await p.upstream.close();
  });
});
