// Request ids and RPC metrics inside one process: the interceptors that
// startRpcServer and rpcClient install, and the embedded launcher's single
// /metrics covering every service of the process.
import { expect } from "chai";
import { freePort } from "../../lib/net/free-port.js";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Code, ConnectError } from "@connectrpc/connect";
import { ArticlesService } from "../../gen/articles/v1/articles_pb.js";
import { startEmbedded, type Embedded } from "../../launch/embedded.js";
import { logger } from "../../lib/log.js";
import { instrumentProviders, registry } from "../../lib/metrics.js";
import { rpcClient } from "../../lib/rpc/client.js";
import { forwardRequestId, requestIdOf } from "../../lib/rpc/request-id.js";
import { startRpcServer, type RpcServer } from "../../lib/rpc/server.js";
import { api, waitFor } from "../support/http.js";
import { parsePrometheusText, total } from "./prom-text.js";
import { sink } from "../support/sink.js";

async function count(name: string, labels: Record<string, string>): Promise<number> {
  return total(parsePrometheusText(await registry.metrics()), name, labels);
}

describe("request ids and RPC metrics in one process", () => {
  let inner: RpcServer;
  let outer: RpcServer;
  const seen: { inner: (string | undefined)[]; outer: (string | undefined)[] } = { inner: [], outer: [] };
  const log = logger("obs-test");

  before(async () => {
    inner = await startRpcServer({
      name: "inner",
      services: [ArticlesService.typeName],
      log,
      routes: (r) =>
        r.service(ArticlesService, {
          async getArticle(req, ctx) {
            seen.inner.push(requestIdOf(ctx));
            if (req.id === "missing") throw new ConnectError("no such article", Code.NotFound);
            return {};
          },
        }),
    });
    const innerClient = rpcClient(ArticlesService, inner.url);
    outer = await startRpcServer({
      name: "outer",
      services: [ArticlesService.typeName],
      log,
      routes: (r) =>
        r.service(ArticlesService, {
          async getArticle(req, ctx) {
            seen.outer.push(requestIdOf(ctx));
            // A hop later in the call, after other awaits, must still carry the id.
            await new Promise((res) => setTimeout(res, 5));
            return innerClient.getArticle({ id: req.id }, forwardRequestId(ctx));
          },
        }),
    });
  });

  after(async () => {
    await outer?.close();
    await inner?.close();
  });

  beforeEach(() => {
    seen.inner.length = 0;
    seen.outer.length = 0;
  });

  it("adopts the caller's x-request-id for the whole call and forwards it on the outgoing RPCs it is handed to", async () => {
    const client = rpcClient(ArticlesService, outer.url);
    await Promise.all([
      client.getArticle({ id: "a" }, { headers: { "x-request-id": "req-one" } }),
      client.getArticle({ id: "b" }, { headers: { "x-request-id": "req-two" } }),
    ]);
    expect(seen.outer.sort()).to.deep.equal(["req-one", "req-two"]);
    expect(seen.inner.sort()).to.deep.equal(["req-one", "req-two"]);
  });

  it("ignores ids that are not short and plain, and invents none", async () => {
    const client = rpcClient(ArticlesService, outer.url);
    await client.getArticle({ id: "a" }, { headers: { "x-request-id": "has spaces\tand tabs" } });
    await client.getArticle({ id: "a" }, { headers: { "x-request-id": "x".repeat(200) } });
    await client.getArticle({ id: "a" });
    expect(seen.outer).to.deep.equal([undefined, undefined, undefined]);
    expect(seen.inner).to.deep.equal([undefined, undefined, undefined]);
  });

  it("times server and client calls by service, method and status code", async () => {
    const labels = (code: string) => ({ service: "articles.v1.ArticlesService", method: "GetArticle", code });
    const before = {
      serverOk: await count("rpc_server_duration_seconds_count", labels("ok")),
      serverMissing: await count("rpc_server_duration_seconds_count", labels("not_found")),
      clientMissing: await count("rpc_client_duration_seconds_count", labels("not_found")),
    };
    const client = rpcClient(ArticlesService, outer.url);
    await client.getArticle({ id: "a" });
    const err = await client.getArticle({ id: "missing" }).catch((e: unknown) => ConnectError.from(e));
    expect(err).to.be.instanceOf(ConnectError);
    // Each call passes through both servers (outer, then inner) and both clients.
    expect((await count("rpc_server_duration_seconds_count", labels("ok"))) - before.serverOk).to.equal(2);
    expect((await count("rpc_server_duration_seconds_count", labels("not_found"))) - before.serverMissing).to.equal(2);
    expect((await count("rpc_client_duration_seconds_count", labels("not_found"))) - before.clientMissing).to.equal(2);
  });
});

describe("speech provider metrics", () => {
  class FakeProviderError extends Error {
    constructor(message: string, readonly retryable: boolean, readonly status?: number) {
      super(message);
    }
  }

  it("times requests that reach a provider and counts its failures by kind, but not cache hits", async () => {
    const cache = new Set<string>(["cached text"]);
    const provider = {
      name: "fakeprov",
      async synthesize(req: { text: string }) {
        await new Promise((r) => setTimeout(r, 20));
        if (req.text === "busy") throw new FakeProviderError("slow down", true, 429);
        if (req.text === "bad key") throw new FakeProviderError("unauthorized", false, 401);
        return Buffer.from(req.text);
      },
    };
    // Shaped like the audio service's SpeechRouter: the step names the provider.
    const router = {
      hits: 0,
      async synthesize(step: { provider: typeof provider }, req: { text: string }) {
        if (cache.has(req.text)) {
          this.hits++;
          return Buffer.from("from cache");
        }
        return step.provider.synthesize(req);
      },
    };
    const measured = instrumentProviders(router);
    const step = { provider };
    const before = {
      count: await count("audio_synthesis_seconds_count", { provider: "fakeprov" }),
      limited: await count("audio_provider_errors_total", { provider: "fakeprov", kind: "rate_limited" }),
      rejected: await count("audio_provider_errors_total", { provider: "fakeprov", kind: "rejected" }),
    };

    expect(String(await measured.synthesize(step, { text: "hello" }))).to.equal("hello");
    expect(String(await measured.synthesize(step, { text: "cached text" }))).to.equal("from cache");
    await measured.synthesize(step, { text: "busy" }).then(
      () => expect.fail("should fail"),
      (e: Error) => expect(e.message).to.equal("slow down"),
    );
    await measured.synthesize(step, { text: "bad key" }).catch(() => undefined);

    expect(router.hits, "the wrapper keeps the router's own state").to.equal(1);
    expect((await count("audio_synthesis_seconds_count", { provider: "fakeprov" })) - before.count).to.equal(1);
    expect(await count("audio_synthesis_seconds_sum", { provider: "fakeprov" })).to.be.at.least(0.015);
    expect((await count("audio_provider_errors_total", { provider: "fakeprov", kind: "rate_limited" })) - before.limited).to.equal(1);
    expect((await count("audio_provider_errors_total", { provider: "fakeprov", kind: "rejected" })) - before.rejected).to.equal(1);
  });
});

describe("embedded launcher metrics", function () {
  this.timeout(180_000);
  const token = "obs-embedded-token-0123456789";
  let dataDir: string;
  let sys: Embedded;
  let metricsPort: number;

  before(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), "obs-embedded-"));
    metricsPort = await freePort();
    sys = await startEmbedded(
      { PORT: "0", HOST: "127.0.0.1", DATA_DIR: dataDir, METRICS_PORT: String(metricsPort), METRICS_HOST: "127.0.0.1", METRICS_SAMPLE_MS: "200", SEED_TOKENS: JSON.stringify([{ token, project: "p", scope: "full" }]) },
      sink(),
    );
  });

  after(async () => {
    await sys?.close();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it("covers every service of the process on the METRICS_PORT listener, not on the public port", async () => {
    expect((await fetch(`${sys.url}/metrics`)).status).to.equal(404);
    const A = api(sys.url, token);
    const created = await A("POST", "/api/articles", { title: "Embedded", text: "Counted on one page of metrics." });
    expect(created.status, created.text).to.equal(200);
    await waitFor("ready", async () => ((await A("GET", `/api/articles/${created.body.id}`)).body?.article?.status === "ready" ? true : undefined), 120_000, 200);
    await A("GET", "/no/such/path");

    const families = await waitFor("the status sampler to see the ready article", async () => {
      const res = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
      const f = parsePrometheusText(await res.text());
      return total(f, "articles_by_status", { status: "ready" }) >= 1 ? f : undefined;
    }, 10_000);
    expect(total(families, "rpc_server_duration_seconds_count", { method: "CreateArticle", code: "ok" })).to.be.at.least(1);
    expect(total(families, "rpc_server_duration_seconds_count", { method: "ClaimAudioJob", code: "ok" })).to.be.at.least(1);
    expect(total(families, "audio_job_duration_seconds_count", { outcome: "done" })).to.be.at.least(1);
    expect(total(families, "http_request_duration_seconds_count", { route: "unmatched", status: "404" })).to.be.at.least(1);
    expect(families.get("audio_queue_jobs")?.samples.map((s) => s.labels.state).sort()).to.deep.equal(["pending", "unacked"]);
  });
});
