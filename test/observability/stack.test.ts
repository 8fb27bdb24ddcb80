// Observability of the full stack as separate processes over NATS: one
// request id in the gateway, articles and audio log lines of a create, and
// Prometheus /metrics with real samples on the gateway port and on the
// services' METRICS_PORT.
import { expect } from "chai";
import { randomUUID } from "node:crypto";
import { api, waitFor } from "../support/http.js";
import { freePort } from "../support/child-servers.js";
import { requireNats } from "../support/servers.js";
import { parsePrometheusText, total, type Family } from "./prom-text.js";
import { linesOf, startStack, TOKEN, type Stack } from "./stack.js";

async function scrape(url: string): Promise<{ contentType: string; families: Map<string, Family>; text: string }> {
  const res = await fetch(url);
  expect(res.status, url).to.equal(200);
  const text = await res.text();
  return { contentType: res.headers.get("content-type") ?? "", families: parsePrometheusText(text), text };
}

describe("observability across processes (NATS)", function () {
  this.timeout(240_000);
  let stack: Stack;
  let metricsPorts: { articles: number; audio: number; gateway: number };
  const requestId = `obs-${randomUUID()}`;
  let articleId: string;

  before(async function () {
    const natsUrl = await requireNats(this);
    metricsPorts = { articles: await freePort(), audio: await freePort(), gateway: await freePort() };
    stack = await startStack(natsUrl, {
      env: {
        articles: { METRICS_PORT: String(metricsPorts.articles), METRICS_SAMPLE_MS: "300" },
        audio: { METRICS_PORT: String(metricsPorts.audio), METRICS_SAMPLE_MS: "300" },
        gateway: { METRICS_PORT: String(metricsPorts.gateway) },
      },
    });
    const A = api(stack.gatewayUrl, TOKEN);
    const created = await A("POST", "/api/articles", { title: "Request ids", text: "One short paragraph that becomes audio. It has two sentences." }, { "x-request-id": requestId });
    expect(created.status, created.text).to.equal(200);
    expect(created.headers.get("x-request-id")).to.equal(requestId);
    articleId = created.body.id;
    await waitFor(
      "the article to be ready",
      async () => {
        const r = await A("GET", `/api/articles/${articleId}`);
        if (r.body?.article?.status === "errored") throw new Error(r.body.article.error);
        return r.body?.article?.status === "ready" ? true : undefined;
      },
      120_000,
      200,
    );
  });

  after(async () => {
    await stack?.stop();
  });

  it("carries one request id from the gateway through articles and the bus to the audio worker and back", async () => {
    // The worker's CompleteAudioJob call is logged by articles after it returns; give the line a moment.
    await waitFor("articles to log the completion", async () => (linesOf(stack, "articles").some((l) => l.msg === "audio ready" && l.reqId === requestId) ? true : undefined), 10_000);
    // The worker logs its own line once CompleteAudioJob has answered it, which may be after articles logged.
    await waitFor("the worker to log the completion", async () => (linesOf(stack, "audio").some((l) => l.msg === "audio job completed" && l.reqId === requestId) ? true : undefined), 10_000);
    const withId = (role: "gateway" | "articles" | "audio") => linesOf(stack, role).filter((l) => l.reqId === requestId).map((l) => l.msg);

    expect(withId("gateway")).to.include("request");
    // The publisher's call, and the worker's calls made on its behalf.
    expect(withId("articles")).to.include.members(["article created", "audio ready"]);
    expect(withId("audio")).to.include.members(["audio job claimed", "audio rendered", "audio job completed"]);
    // Another request does not borrow the id (a refused one: successful reads are logged summed, docs/running.md).
    const other = await api(stack.gatewayUrl, TOKEN)("GET", `/api/articles/${articleId}-gone`);
    const otherId = other.headers.get("x-request-id");
    expect(otherId).to.be.a("string").and.not.equal(requestId);
    await waitFor("the gateway to log the second request", async () => (linesOf(stack, "gateway").some((l) => l.reqId === otherId) ? true : undefined), 5_000);
  });

  it("serves Prometheus text on the gateway's METRICS_PORT (not its public port) with HTTP and RPC client histograms by route template", async () => {
    expect((await fetch(`${stack.gatewayUrl}/metrics`)).status).to.equal(404);
    const { contentType, families, text } = await scrape(`http://127.0.0.1:${metricsPorts.gateway}/metrics`);
    expect(contentType).to.match(/^text\/plain; version=0\.0\.4/);
    expect(families.get("http_request_duration_seconds")?.type).to.equal("histogram");
    expect(total(families, "http_request_duration_seconds_count", { method: "POST", route: "/api/articles", status: "200" })).to.be.at.least(1);
    expect(total(families, "http_request_duration_seconds_count", { method: "GET", route: "/api/articles/:articleId", status: "200" })).to.be.at.least(1);
    expect(total(families, "http_request_duration_seconds_sum", { method: "POST", route: "/api/articles" })).to.be.greaterThan(0);
    // Raw paths would make a series per article.
    expect(text).not.to.include(articleId);
    expect(total(families, "rpc_client_duration_seconds_count", { service: "articles.v1.ArticlesService", method: "CreateArticle", code: "ok" })).to.be.at.least(1);
    expect(families.get("process_cpu_seconds_total")?.type, "default Node metrics").to.equal("counter");
  });

  it("serves the articles service's RPC server histogram and article counts on METRICS_PORT", async () => {
    const url = `http://127.0.0.1:${metricsPorts.articles}/metrics`;
    const { families } = await scrape(url);
    expect(families.get("rpc_server_duration_seconds")?.type).to.equal("histogram");
    expect(total(families, "rpc_server_duration_seconds_count", { service: "articles.v1.ArticlesService", method: "CreateArticle", code: "ok" })).to.be.at.least(1);
    expect(total(families, "rpc_server_duration_seconds_count", { service: "articles.v1.ArticlesService", method: "CompleteAudioJob", code: "ok" })).to.be.at.least(1);
    // Sampled from the store every 300 ms here.
    await waitFor("articles_by_status to count the ready article", async () => {
      const again = (await scrape(url)).families;
      return total(again, "articles_by_status", { status: "ready" }) >= 1 ? again : undefined;
    }, 10_000).then((f) => expect(total(f, "articles_by_status", { status: "waiting" })).to.equal(0));
    const other = await fetch(`http://127.0.0.1:${metricsPorts.articles}/elsewhere`);
    expect(other.status).to.equal(404);
  });

  it("serves job, synthesis and queue metrics from the audio worker on METRICS_PORT", async () => {
    const { families } = await scrape(`http://127.0.0.1:${metricsPorts.audio}/metrics`);
    expect(total(families, "audio_job_duration_seconds_count", { outcome: "done" })).to.be.at.least(1);
    expect(total(families, "audio_jobs_in_flight")).to.equal(0);
    const synth = families.get("audio_synthesis_seconds");
    expect(synth?.type).to.equal("histogram");
    const providers = new Set(synth!.samples.filter((s) => s.name === "audio_synthesis_seconds_count" && s.value > 0).map((s) => s.labels.provider));
    expect([...providers]).to.have.length.at.least(1);
    expect([...providers][0]).to.match(/^local/);
    expect(total(families, "rpc_client_duration_seconds_count", { service: "articles.v1.ArticlesService", method: "ClaimAudioJob", code: "ok" })).to.be.at.least(1);
    // The NATS consumer's backlog, sampled: the one job was acknowledged.
    await waitFor("the queue gauge", async () => {
      const f = (await scrape(`http://127.0.0.1:${metricsPorts.audio}/metrics`)).families;
      const series = f.get("audio_queue_jobs")?.samples ?? [];
      return series.length === 2 && total(f, "audio_queue_jobs", { state: "unacked" }) === 0 ? true : undefined;
    }, 10_000);
  });
});
