// The status-table scenarios (limits, credit, rules, parsing, recrawl,
// events), written once and run against every deployment shape: each suite
// starts its system and hands over where to reach it. Everything goes through
// the public REST API and the admin CLI, plus a loopback server that plays
// both the publisher's web page and the webhook receiver.
import { expect } from "chai";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { verifyWebhook } from "../../services/articles/events/webhook.js";
import { runCli } from "../../services/auth/cli.js";
import { api, waitFor } from "../support/http.js";

export interface StatusTarget {
  /** Public gateway base URL. */
  url: string;
  authUrl: string;
  articlesUrl: string;
  adminToken: string;
  internalToken: string;
}

const SECRET = "whsec-statuses-0123456789";

const STORY = (detail: string) => `<!doctype html><html><head><title>Harbour reopens | Example News</title></head><body>
<nav><a href="/">Home</a><a href="/local">Local</a></nav><div class="ad-banner">Advertisement: cheap flights</div>
<article><h1>Harbour reopens</h1><p>The harbour reopened on Monday after two years of repairs, the city said in a statement.</p>
<p>${detail}</p><figure><img src="h.jpg"><figcaption>Photo: City archive</figcaption></figure></article>
<footer>Imprint</footer></body></html>`;

/**
 * Serves the story page on every path but /hook, which records webhook
 * deliveries. Listens on 127.0.0.1 only: the system under test must list
 * 127.0.0.1 in FETCH_ALLOW_PRIVATE to reach it.
 */
export class PublisherSite {
  story = STORY("Ferries will run every hour from next week.");
  readonly hooks: Array<{ signature: string; body: string }> = [];
  url = "";
  private server?: http.Server;

  async start(): Promise<void> {
    this.server = http.createServer((req, res) => {
      let body = "";
      req.on("data", (c) => (body += c));
      req.on("end", () => {
        if (req.url === "/hook") {
          this.hooks.push({ signature: String(req.headers["x-webhook-signature"]), body });
          res.writeHead(204).end();
        } else res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(this.story);
      });
    });
    await new Promise<void>((r) => this.server!.listen(0, "127.0.0.1", r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    const s = this.server;
    if (!s) return;
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
}

/**
 * Registers the scenarios as `it`s in the calling describe. `target` is read
 * when a test runs, so the suite's before hook may start the system; the
 * site must be started by then too.
 */
/** The admin CLI against the target, as an operator runs it. */
export function operator(target: () => StatusTarget) {
  let projects = 0;
  async function cli(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
    let out = "";
    let err = "";
    const t = target();
    const env = { AUTH_URL: t.authUrl, ADMIN_TOKEN: t.adminToken, ARTICLES_URL: t.articlesUrl, INTERNAL_TOKEN: t.internalToken };
    const code = await runCli(argv, env, { out: (s) => (out += s + "\n"), err: (s) => (err += s + "\n") });
    return { code, out, err };
  }
  const cliJson = async (...argv: string[]) => {
    const r = await cli(...argv, "--json");
    expect(r.code, r.err).to.equal(0);
    return JSON.parse(r.out);
  };

  /** A project with a full token, made through the CLI as an operator would. */
  async function project(id: string, ...settings: string[]) {
    await cliJson("projects:create", id);
    const { token } = await cliJson("tokens:issue", id, "full");
    if (settings.length) await cliJson("settings:set", id, ...settings);
    return api(target().url, token);
  }

  /** A project of a fresh id (`prefix` and a suffix) with a full and a read token; `settings` as for settings:set. */
  async function projectWithTokens(prefix: string, ...settings: string[]) {
    const id = `${prefix}-${Date.now().toString(36)}-${++projects}`;
    await cliJson("projects:create", id);
    const { token } = await cliJson("tokens:issue", id, "full");
    const { token: readToken } = await cliJson("tokens:issue", id, "read");
    if (settings.length) await cliJson("settings:set", id, ...settings);
    return { id, token, readToken, A: api(target().url, token), R: api(target().url, readToken) };
  }
  return { cli, cliJson, project, projectWithTokens };
}

export function statusScenarios(target: () => StatusTarget, site: PublisherSite): void {
  const { cli, cliJson, project } = operator(target);

  const statusesOf = async (call: ReturnType<typeof api>, ids: string[]) =>
    Promise.all(ids.map(async (id) => (await call("GET", `/api/articles/${id}`)).body.article.status as string));

  it("limit_reached: 50 concurrent creates against a daily limit of 10 audify exactly 10", async () => {
    const A = await project("limited", "dailyLimit=10");
    const created = await Promise.all(Array.from({ length: 50 }, (_, i) => A("POST", "/api/articles", { title: `Note ${i}`, text: `Short note number ${i}.` })));
    expect(created.map((r) => r.status)).to.deep.equal(Array(50).fill(200));
    const ids = created.map((r) => r.body.id as string);
    const final = await waitFor("10 ready, 40 waiting for the limit", async () => {
      const s = await statusesOf(A, ids);
      const ready = s.filter((x) => x === "ready").length;
      return ready === 10 ? s : undefined;
    }, 240_000, 500);
    expect(final.filter((x) => x === "limit_reached")).to.have.length(40);
    const settings = await cliJson("settings:get", "limited");
    expect(settings.usage.count).to.equal(10);
    const waiting = ids[final.indexOf("limit_reached")];
    const d = await cli("articles:decision", "limited", waiting);
    expect(d.out).to.match(/^limit_reached \(revision 1\): dailyLimit: /);
    // Listing shows them too, with the spec's status names.
    const list = await A("GET", "/api/articles?limit=100");
    expect(list.body.articles.filter((a: { status: string }) => a.status === "limit_reached")).to.have.length(40);
  });

  it("no_money: the balance never goes negative under concurrency, and added credit admits waiting articles", async () => {
    const A = await project("paying", "creditChars=100");
    // Each article speaks 20 characters: a 3-character title and 17 of text.
    const text = "Words to speak...";
    expect(text).to.have.length(17);
    const created = await Promise.all(Array.from({ length: 20 }, (_, i) => A("POST", "/api/articles", { title: `N${String(i).padStart(2, "0")}`, text })));
    const ids = created.map((r) => r.body.id as string);
    const s = await statusesOf(A, ids);
    expect(s.filter((x) => x === "no_money")).to.have.length(15);
    expect((await cliJson("settings:get", "paying")).creditChars).to.equal(0);

    const added = await cliJson("credit:add", "paying", "45");
    expect(added.creditChars).to.equal(45);
    expect(added.admitted).to.equal(2);
    expect((await cliJson("settings:get", "paying")).creditChars).to.equal(5);
    await waitFor("7 ready", async () => ((await statusesOf(A, ids)).filter((x) => x === "ready").length === 7 ? true : undefined), 120_000, 500);
    expect((await statusesOf(A, ids)).filter((x) => x === "no_money")).to.have.length(13);
  });

  it("rejected: a rule decides before synthesis, the CLI shows which, and an update un-rejects", async () => {
    const A = await project("ruled", 'rules={"urlDeny":["*/sponsored/*"],"minChars":20}');
    const r = await A("POST", "/api/articles", { title: "Deal", text: "A long enough text to pass the length rule.", url: "https://news.example/sponsored/deal" });
    const id = r.body.id;
    expect((await A("GET", `/api/articles/${id}`)).body.article.status).to.equal("rejected");
    const d = await cliJson("articles:decision", "ruled", id);
    expect(d).to.include({ status: "rejected", rule: "rules.urlDeny" });
    const u = await A("PUT", `/api/articles/${id}`, { title: "Deal", text: "A long enough text to pass the length rule.", url: "https://news.example/local/harbour" });
    expect(u.status).to.equal(200);
    const ready = await waitFor("ready after un-reject", async () => {
      const a = (await A("GET", `/api/articles/${id}`)).body.article;
      return a.status === "ready" ? a : undefined;
    }, 120_000, 300);
    expect(ready.audio).to.be.a("string");
  });

  it("parsed and recrawling, seen through signed webhooks: parse → synthesis; recrawl unchanged → untouched; changed → re-audified", async () => {
    const A = await project("hooked", `webhook={"url":"${site.url}/hook","secret":"${SECRET}"}`);
    const url = `${site.url}/story`;
    const story = site.story;
    const r = await A("POST", "/api/articles", { title: "Harbour reopens", text: story, parse: true, url });
    const id = r.body.id;
    const first = await waitFor("ready", async () => {
      const a = (await A("GET", `/api/articles/${id}`)).body.article;
      return a.status === "ready" ? a : undefined;
    }, 120_000, 300);
    expect(first.text).to.equal(story);
    const events = () => site.hooks.map((h) => JSON.parse(h.body)).filter((e) => e.articleId === id);
    await waitFor("ready webhook", async () => (events().some((e) => e.status === "ready") ? true : undefined), 20_000, 100);
    for (const h of site.hooks) expect(verifyWebhook(SECRET, h.signature, h.body)).to.equal(true);
    expect(events().map((e) => e.status)).to.include.members(["waiting", "parsed", "processing", "ready"]);

    const same = await cli("articles:recrawl", "hooked", id);
    expect(same.out).to.match(/content unchanged; status ready/);
    expect((await A("GET", `/api/articles/${id}`)).body.article).to.deep.include({ status: "ready", audio: first.audio });

    site.story = STORY("Ferries will run every thirty minutes from next week.");
    const changed = await cliJson("articles:recrawl", "hooked", id);
    expect(changed).to.include({ changed: true, revision: 2 });
    const second = await waitFor("re-audified", async () => {
      const a = (await A("GET", `/api/articles/${id}`)).body.article;
      return a.status === "ready" && a.audio !== first.audio ? a : undefined;
    }, 120_000, 300);
    expect(second.audio).to.contain(`/${id}/2/`);
    await waitFor("revision 2 ready webhook", async () => (events().some((e) => e.status === "ready" && e.revision === 2) ? true : undefined), 20_000, 100);
    const statuses = events().map((e) => `${e.revision}:${e.status}`);
    expect(statuses).to.include.members(["1:recrawling", "2:waiting", "2:parsed", "2:ready"]);
  });

  it("articles:recount recomputes the counts behind list totals; the totals stay what the articles say", async () => {
    const R = await project("recounted");
    for (let i = 0; i < 3; i++) expect((await R("POST", "/api/articles", { title: `Recount ${i}`, text: `Short note ${i}.` })).status).to.equal(200);
    expect((await R("GET", "/api/articles")).body.count).to.equal(3);
    const r = await cliJson("articles:recount");
    expect(r.tookMs).to.be.a("number");
    expect((await R("GET", "/api/articles")).body.count).to.equal(3);
  });

  it("the admin CLI refuses bad settings naming the field, and publisher tokens cannot administer", async () => {
    const bad = await cli("settings:set", "limited", "rules.maxChars=-5");
    expect(bad.code).to.equal(1);
    expect(bad.err).to.match(/InvalidArgument: rules\.maxChars: /);
    const { token } = await cliJson("tokens:issue", "limited", "full");
    const r = await runCli(["settings:get", "limited"], { AUTH_URL: target().authUrl, ADMIN_TOKEN: token }, { out: () => {}, err: () => {} });
    expect(r).to.equal(1);
  });
}
