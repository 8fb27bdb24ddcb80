// Webhook isolation end to end on the embedded default (issue 12, point 4):
// one project's receiver answers in 9.5 s, another project's webhooks still
// arrive without waiting behind it (well within a second here). Both receivers are loopback
// servers reached through FETCH_ALLOW_PRIVATE host:port entries, and a URL on
// a port that is not listed is refused when it is set.
import { expect } from "chai";
import http from "node:http";
import { mkdtemp, rm } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { startEmbedded, type Embedded } from "../../launch/embedded.js";
import { runCli } from "../../services/auth/cli.js";
import { api, waitFor } from "../support/http.js";
import { sink } from "../support/sink.js";

/** How long the slow project's receiver takes to answer each call. */
const SLOW_RECEIVER_MS = 9_500;

const ADMIN = "admin-token-for-webhook-iso-0123456789";
const INTERNAL = "internal-token-for-webhook-iso-0123456789";
const SECRET = "whsec-isolation-0123456789";

interface Hook {
  event: { articleId: string; status: string; at: string };
  receivedAt: number;
}

async function receiver(answerAfterMs: number) {
  const hooks: Hook[] = [];
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      hooks.push({ event: JSON.parse(body), receivedAt: Date.now() });
      const t = setTimeout(() => res.writeHead(204).end(), answerAfterMs);
      res.on("close", () => clearTimeout(t));
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: `http://127.0.0.1:${port}/hook`,
    hooks,
    stop: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))),
  };
}

describe("webhook isolation end to end (embedded default)", function () {
  this.timeout(180_000);
  let dataDir: string;
  let sys: Embedded;
  let slow: Awaited<ReturnType<typeof receiver>>;
  let fast: Awaited<ReturnType<typeof receiver>>;
  let unlisted: Awaited<ReturnType<typeof receiver>>;

  before(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), "e2e-webhook-iso-"));
    slow = await receiver(SLOW_RECEIVER_MS);
    fast = await receiver(0);
    unlisted = await receiver(0);
    sys = await startEmbedded(
      {
        PORT: "0",
        HOST: "127.0.0.1",
        DATA_DIR: dataDir,
        ADMIN_TOKEN: ADMIN,
        INTERNAL_TOKEN: INTERNAL,
        SEED_TOKENS: "[]",
        FETCH_ALLOW_PRIVATE: `127.0.0.1:${slow.port},127.0.0.1:${fast.port}`,
      },
      sink(),
    );
  });

  after(async () => {
    await sys?.close();
    for (const r of [slow, fast, unlisted]) await r?.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  async function cli(...argv: string[]) {
    let out = "";
    let err = "";
    const env = { AUTH_URL: sys.services[0].url, ADMIN_TOKEN: ADMIN, ARTICLES_URL: sys.services[1].url, INTERNAL_TOKEN: INTERNAL };
    const code = await runCli([...argv, "--json"], env, { out: (s) => (out += s + "\n"), err: (s) => (err += s + "\n") });
    return { code, out, err };
  }

  async function project(id: string, hookUrl: string) {
    expect((await cli("projects:create", id)).code).to.equal(0);
    const issued = await cli("tokens:issue", id, "full");
    expect(issued.code, issued.err).to.equal(0);
    const set = await cli("settings:set", id, `webhook={"url":"${hookUrl}","secret":"${SECRET}"}`);
    expect(set.code, set.err).to.equal(0);
    return api(sys.url, JSON.parse(issued.out).token);
  }

  it("refuses a loopback webhook URL on a port FETCH_ALLOW_PRIVATE does not list, saying why", async () => {
    expect((await cli("projects:create", "unlisted")).code).to.equal(0);
    const r = await cli("settings:set", "unlisted", `webhook={"url":"${unlisted.url}","secret":"${SECRET}"}`);
    expect(r.code).to.not.equal(0);
    expect(r.err).to.match(/webhook\.url: refused, 127\.0\.0\.1 resolves to a loopback address/);
    expect(r.err).to.include("FETCH_ALLOW_PRIVATE");
    const shown = await cli("settings:get", "unlisted");
    expect(JSON.parse(shown.out).webhook ?? null).to.equal(null);
  });

  it("delivers another project's webhooks without waiting behind one project's receiver that takes 9.5 s per call", async () => {
    const S = await project("slowhooks", slow.url);
    const F = await project("fasthooks", fast.url);
    // Each article sends several status events (waiting, processing, ready): far more than the old shared pool of 8.
    for (let i = 0; i < 12; i++) expect((await S("POST", "/api/articles", { title: `Slow ${i}`, text: `Short article ${i} for a slow receiver.` })).status).to.equal(200);
    await waitFor("the slow receiver busy", async () => (slow.hooks.length >= 2 ? true : undefined), 30_000, 50);

    const created = await F("POST", "/api/articles", { title: "Fast news", text: "The ferry terminal opened on Monday morning with hourly services." });
    expect(created.status).to.equal(200);
    const id = created.body.id;
    await waitFor("the fast project's ready webhook", async () => (fast.hooks.some((h) => h.event.articleId === id && h.event.status === "ready") ? true : undefined), 60_000, 50);
    const delays = fast.hooks.filter((h) => h.event.articleId === id).map((h) => ({ status: h.event.status, ms: h.receivedAt - Date.parse(h.event.at) }));
    const worst = Math.max(...delays.map((d) => d.ms));
    // eslint-disable-next-line no-console
    console.log(`      [webhook isolation e2e] other project's webhook delays ${delays.map((d) => `${d.status} ${d.ms} ms`).join(", ")}; slow receiver had ${slow.hooks.length} calls so far`);
    expect(delays.map((d) => d.status)).to.include("ready");
    // Measured well under a second. Asserted: none of them waited behind a slow receiver's call,
    // which would have held it for the whole of one.
    expect(worst).to.be.below(SLOW_RECEIVER_MS);
  });
});
