// The embedded default keeps read answers and reuses them until a write they
// could be made from lands (gateway/kept-answers.ts). A publisher must not
// notice, except in speed: every read shows each write the moment it is
// acknowledged, and a credential is never answered with another one's answer.
import { expect } from "chai";
import { mkdtemp, rm } from "node:fs/promises";
import http from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { AuthService, Scope } from "../../gen/auth/v1/auth_pb.js";
import { startEmbedded, type Embedded } from "../../launch/embedded.js";
import { DEFAULT_KEPT_CHARS } from "../../gateway/kept-answers.js";
import { freePort } from "../../lib/net/free-port.js";
import { rpcClient } from "../../lib/rpc/client.js";
import { parsePrometheusText, total } from "../observability/prom-text.js";
import { api, waitFor } from "../support/http.js";
import { ROOMY_RATE_LIMITS } from "../support/rate-limits.js";
import { sink } from "../support/sink.js";
import { collectedHeapBytes } from "../gateway/collected-heap.js";

const ADMIN = "kept-admin-0123456789abcdef";
const TOKENS = { full: "kept-alpha-full-0123456789", read: "kept-alpha-read-0123456789", other: "kept-beta-full-0123456789" };
const SEED = JSON.stringify([
  { token: TOKENS.full, project: "alpha", scope: "full" },
  { token: TOKENS.read, project: "alpha", scope: "read" },
  { token: TOKENS.other, project: "beta", scope: "full" },
]);

describe("Read answers on the embedded default follow every write at once", function () {
  this.timeout(180_000);
  let dataDir: string;
  let sys: Embedded;
  let metricsPort: number;
  const A = () => api(sys.url, TOKENS.full);

  const metrics = async () => parsePrometheusText(await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text());
  /** GetArticle calls the articles service has answered so far (kept answers do not reach it). */
  const upstreamReads = async () => total(await metrics(), "rpc_server_duration_seconds_count", { service: "articles.v1.ArticlesService", method: "GetArticle" });
  const keptHits = async () => total(await metrics(), "gateway_kept_answers_total", { result: "hit" });

  before(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), "e2e-kept-"));
    metricsPort = await freePort();
    sys = await startEmbedded(
      { PORT: "0", HOST: "127.0.0.1", DATA_DIR: dataDir, SEED_TOKENS: SEED, ADMIN_TOKEN: ADMIN, METRICS_PORT: String(metricsPort), METRICS_HOST: "127.0.0.1", AUDIO_ENGINE: process.env.AUDIO_ENGINE, ...ROOMY_RATE_LIMITS },
      sink(),
    );
  });
  after(async () => {
    await sys?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it("answers repeated reads without asking the articles service again", async () => {
    const created = await A()("POST", "/api/articles", { title: "Kept", text: "Read many times. Written once." });
    expect(created.status, created.text).to.equal(200);
    const id = created.body.id as string;
    await waitFor("the article to settle", async () => ((await A()("GET", `/api/articles/${id}`)).body.article.status === "ready" ? true : undefined), 120_000, 100);
    const first = await A()("GET", `/api/articles/${id}`);
    const before = await upstreamReads();
    const hitsBefore = await keptHits();
    for (let i = 0; i < 20; i++) expect((await A()("GET", `/api/articles/${id}`)).text).to.equal(first.text);
    // An answer is kept for a second at most: a slow machine may make it again once or twice.
    expect(await upstreamReads()).to.be.within(before, before + 2);
    // What an operator sees of it.
    expect((await keptHits()) - hitsBefore).to.be.within(18, 20);
  });

  it("shows an update, its render and a delete in the very next read, by id, external id, URL and list", async () => {
    const url = "https://news.example/kept/harbour";
    const created = await A()("POST", "/api/articles", { title: "Harbour v1", text: "The harbour opens in May.", externalId: "kept-harbour", url });
    const id = created.body.id as string;
    const reads = [`/api/articles/${id}`, "/api/articles_external_id/kept-harbour", `/api/articles_external_url/${encodeURIComponent(url)}`, "/api/articles?limit=100"];
    const titleIn = (r: { body: any }) => (r.body.article ?? r.body.articles.find((a: { id: string }) => a.id === id)).title;
    const statusIn = (r: { body: any }) => (r.body.article ?? r.body.articles.find((a: { id: string }) => a.id === id)).status;
    await waitFor("the first render", async () => (statusIn(await A()("GET", reads[0])) === "ready" ? true : undefined), 120_000, 100);
    // Every form read twice: the second comes from what was kept.
    for (const r of reads) for (let i = 0; i < 2; i++) expect(titleIn(await A()("GET", r))).to.equal("Harbour v1");

    expect((await A()("PUT", `/api/articles/${id}`, { title: "Harbour v2", text: "The harbour opens in June." })).status).to.equal(200);
    for (const r of reads) expect(titleIn(await A()("GET", r)), r).to.equal("Harbour v2");
    // The render's status writes come from the worker, not from this client: each shows up too.
    const ready = await waitFor("the second render", async () => {
      const got = await A()("GET", reads[0]);
      return got.body.article.status === "ready" ? got.body.article : undefined;
    }, 120_000, 50);
    expect(ready.audio).to.match(/\/2\//);
    for (const r of reads) expect(statusIn(await A()("GET", r)), r).to.equal("ready");

    expect((await A()("DELETE", `/api/articles/${id}`)).status).to.equal(200);
    expect((await A()("GET", reads[0])).body.article.status).to.equal("deleted");
    expect((await A()("GET", reads[1])).body.article.status).to.equal("deleted");
  });

  it("keeps an answer by id through creates of other articles, and shows each new article in the next list", async () => {
    const created = await A()("POST", "/api/articles", { title: "Kept through creates", text: "Read while others are created." });
    const id = created.body.id as string;
    await waitFor("the article to settle", async () => ((await A()("GET", `/api/articles/${id}`)).body.article.status === "ready" ? true : undefined), 120_000, 100);
    const first = await A()("GET", `/api/articles/${id}`);
    // The others are created waiting for a listener (audio on demand): an insert and nothing else.
    const before = await upstreamReads();
    for (let i = 0; i < 5; i++) {
      const r = await fetch(`${sys.url}/api/articles/import?audio=onDemand`, {
        method: "POST",
        headers: { authorization: `Bearer ${TOKENS.full}`, "content-type": "application/x-ndjson" },
        body: `${JSON.stringify({ title: `Created meanwhile ${i}`, text: "Another article." })}\n`,
      });
      const newId = JSON.parse((await r.text()).split("\n")[0]).id as string;
      expect((await A()("GET", `/api/articles/${id}`)).text).to.equal(first.text);
      const list = await A()("GET", "/api/articles?limit=100");
      expect(list.body.articles.map((a: { id: string }) => a.id)).to.include(newId);
      expect((await A()("GET", `/api/articles/${newId}`)).body.article.title).to.equal(`Created meanwhile ${i}`);
    }
    // One read of each new article; the first one's answer was kept (for a second at most: a slow machine may make it again a few times, not once per create).
    expect((await upstreamReads()) - before).to.be.below(5 + 3);
    // And an update of it is in the very next read.
    expect((await A()("PUT", `/api/articles/${id}`, { title: "Kept, then updated", text: "Read while others are created." })).status).to.equal(200);
    expect((await A()("GET", `/api/articles/${id}`)).body.article.title).to.equal("Kept, then updated");
  });

  it("never answers one credential with what another was answered", async () => {
    const created = await A()("POST", "/api/articles", { title: "Alpha only", text: "Belongs to project alpha." });
    const id = created.body.id as string;
    for (let i = 0; i < 3; i++) expect((await A()("GET", `/api/articles/${id}`)).status).to.equal(200);
    const other = await api(sys.url, TOKENS.other)("GET", `/api/articles/${id}`);
    expect(other.status).to.equal(404);
    expect(other.text).to.not.include("Alpha only");
    expect((await api(sys.url, TOKENS.read)("GET", `/api/articles/${id}`)).body.article.title).to.equal("Alpha only");
    expect((await api(sys.url, "kept-unknown-token-0123456789")("GET", `/api/articles/${id}`)).status).to.equal(401);
    expect((await api(sys.url)("GET", `/api/articles/${id}`)).status).to.equal(401);
  });

  it("stops answering a revoked token within a second of when it would without kept answers", async () => {
    const admin = rpcClient(AuthService, sys.services.find((s) => s.name === "auth")!.url, { token: ADMIN });
    const issued = await admin.issueToken({ projectId: "alpha", scope: Scope.READ });
    const T = api(sys.url, issued.token);
    const created = await A()("POST", "/api/articles", { title: "Revocation", text: "Read with a token that will be revoked." });
    const id = created.body.id as string;
    for (let i = 0; i < 3; i++) expect((await T("GET", `/api/articles/${id}`)).status).to.equal(200);
    await admin.revokeToken({ tokenId: issued.info!.id });
    const revokedAt = Date.now();
    // The services trust a token they checked for 5 s (lib/rpc/caller.ts); a kept answer lives 1 s at most.
    // Each poll's own duration is allowed on top, so a loaded machine's slow answers do not count against the window.
    let refusedAsked = 0;
    let slowestPoll = 0;
    await waitFor(
      "the revoked token to be refused",
      async () => {
        const asked = Date.now();
        const status = (await T("GET", `/api/articles/${id}`)).status;
        slowestPoll = Math.max(slowestPoll, Date.now() - asked);
        if (status !== 401) return undefined;
        refusedAsked = asked;
        return true;
      },
      30_000,
      50,
    );
    expect(refusedAsked - revokedAt, `slowest poll ${slowestPoll} ms`).to.be.below(6_000 + 500 + slowestPoll);
  });

  it("holds no more memory than its bound after 20,000 reads with distinct 15 KB query strings", async function () {
    this.timeout(600_000);
    const created = await A()("POST", "/api/articles", { title: "Long queries", text: "Read with a query string the route ignores." });
    const id = created.body.id as string;
    const path = `/api/articles/${id}`;
    await waitFor("the article to settle", async () => ((await A()("GET", path)).body.article.status === "ready" ? true : undefined), 120_000, 100);
    const first = await A()("GET", path);
    const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
    const get = (i: number) =>
      new Promise<{ status: number; text: string }>((resolve, reject) => {
        const req = http.get(`${sys.url}${path}?q=${i}-${"x".repeat(15_000)}`, { agent, headers: { authorization: `Bearer ${TOKENS.full}` } }, (res) => {
          let text = "";
          res.setEncoding("utf8");
          res.on("data", (d: string) => (text += d));
          res.on("end", () => resolve({ status: res.statusCode!, text }));
        });
        req.on("error", reject);
      });
    const before = collectedHeapBytes();
    let next = 0;
    let wrong = 0;
    let sample = "";
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next < 20_000) {
          const got = await get(next++);
          if (got.status !== 200 || got.text !== first.text) {
            wrong++;
            sample ||= `${got.status} ${got.text.slice(0, 200)}`;
          }
        }
      }),
    );
    agent.destroy();
    const grown = collectedHeapBytes() - before;
    expect(wrong, `reads answered otherwise than without a query, such as: ${sample}`).to.equal(0);
    // The bound counts characters (here one byte each) of keys, answers and each entry's overhead;
    // 16 MiB more is what the rest of the process may grow by meanwhile (docs/running.md).
    expect(grown, `heap grew by ${(grown / 2 ** 20).toFixed(1)} MiB`).to.be.below(DEFAULT_KEPT_CHARS + 16 * 2 ** 20);
  });
});
