// Admission in the articles service against a real auth service (settings,
// limits, credit): parsed, rejected, limit_reached, no_money, refunds,
// recrawl, status events and signed webhooks. No synthesis: the test plays
// the audio worker through the internal RPCs.
import { expect } from "chai";
import { Code, ConnectError } from "@connectrpc/connect";
import { mkdtemp, rm } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ArticleStatus, ArticlesService } from "../../gen/articles/v1/articles_pb.js";
import { AuthService, Scope } from "../../gen/auth/v1/auth_pb.js";
import type { AudioJob, JobBus } from "../../lib/bus/port.js";
import { logger } from "../../lib/log.js";
import { closeRpcClients, rpcClient } from "../../lib/rpc/client.js";
import type { RunningService } from "../../lib/service.js";
import { checkRules, wildcard } from "../../services/articles/admission/rules.js";
import { startArticlesService } from "../../services/articles/app.js";
import { classifyContent } from "../../services/articles/content/classify.js";
import { extractMainContent } from "../../services/articles/content/extract.js";
import { verifyWebhook } from "../../services/articles/events/webhook.js";
import { openEmbeddedArticleStore } from "../../services/articles/store/open.js";
import type { ArticleStore } from "../../services/articles/store/port.js";
import { startAuthService } from "../../services/auth/app.js";
import { openEmbeddedAuthStore } from "../../services/auth/store/open.js";
import type { AuthStore } from "../../services/auth/store/port.js";
import { waitFor } from "../support/wait.js";

const ADMIN = "admin-secret-for-rules-0123456789";
const INTERNAL = "internal-secret-for-rules-0123456789";
const SECRET = "whsec-rules-test-0123456789";

const SPORTS_TEXT =
  "Bayern Munich beat Dortmund 3-1 in the Bundesliga on Saturday. The striker scored twice in the second half, and the coach praised the team after the match. " +
  "The league title race is now open, with the club two points behind the leaders after 12 games of the season.";
const SPORTS_HTML = `<!doctype html><html><head><title>Bayern beat Dortmund | Example Sport</title><script>track()</script></head><body>
<nav><a href="/">Home</a> <a href="/sport">Sport</a></nav>
<div class="ad-slot">Buy cheap tickets now!</div>
<article><h1>Bayern beat Dortmund</h1><p>${SPORTS_TEXT}</p><figure><img src="x.jpg"><figcaption>Photo: Agency</figcaption></figure>
<p>The next match is on Wednesday evening at home.</p></article>
<footer>© Example Sport</footer></body></html>`;

interface EventBus extends JobBus {
  published: AudioJob[];
  events: Array<{ subject: string; data: any }>;
}

function eventBus(): EventBus {
  const bus: EventBus = {
    published: [],
    events: [],
    async publish(job) {
      bus.published.push({ articleId: job.articleId, projectId: job.projectId, revision: job.revision });
    },
    async consume() {
      throw new Error("not used");
    },
    async publishEvent(subject, data) {
      bus.events.push({ subject, data });
    },
    async close() {},
  };
  return bus;
}

async function failure(p: Promise<unknown>): Promise<ConnectError> {
  try {
    await p;
  } catch (e) {
    return ConnectError.from(e);
  }
  throw new Error("expected a failure");
}

describe("rules", () => {
  it("matches URL wildcards over the whole URL, case-insensitively, with regex characters taken literally", () => {
    expect(wildcard("https://example.com/news/*").test("https://EXAMPLE.com/news/a?b=1")).to.equal(true);
    expect(wildcard("https://example.com/news/*").test("https://example.com/sport/a")).to.equal(false);
    expect(wildcard("*/ads/*").test("https://x.example/ads/1")).to.equal(true);
    expect(wildcard("https://a.b/(x)+").test("https://a.b/(x)+")).to.equal(true);
    expect(wildcard("https://a.b/(x)+").test("https://a.b/xx")).to.equal(false);
  });

  it("matches patterns written with umlauts or percent-escapes against a URL stored normalised", () => {
    const a = { text: "x".repeat(500), url: "https://xn--bcher-kva.example/lokales/%C3%BCber-uns", labels: [], lang: "de-DE", types: [] };
    expect(checkRules({ urlAllow: ["https://bücher.example/*"] }, a)).to.equal(null);
    expect(checkRules({ urlAllow: ["https://xn--bcher-kva.example/*"] }, a)).to.equal(null);
    expect(checkRules({ urlDeny: ["*/über-*"] }, a)?.rule).to.equal("rules.urlDeny");
    expect(checkRules({ urlDeny: ["*/%C3%BCber-*"] }, a)?.rule).to.equal("rules.urlDeny");
    expect(checkRules({ urlAllow: ["https://bücher.example/sport/*"] }, a)?.rule).to.equal("rules.urlAllow");
  });

  it("names the first rule that fails, and passes an article that meets them all", () => {
    const a = { text: "x".repeat(500), url: "https://example.com/news/1", labels: ["politics"], lang: "en-US", types: [{ name: "news", score: 0.7 }] };
    expect(checkRules({}, a)).to.equal(null);
    expect(checkRules({ minChars: 1000 }, a)?.rule).to.equal("rules.minChars");
    expect(checkRules({ maxChars: 100 }, a)?.rule).to.equal("rules.maxChars");
    expect(checkRules({ languages: ["de-DE"] }, a)?.rule).to.equal("rules.languages");
    expect(checkRules({ urlDeny: ["*/news/*"] }, a)).to.deep.equal({ rule: "rules.urlDeny", detail: "url matches denied pattern '*/news/*'" });
    expect(checkRules({ urlAllow: ["https://other.example/*"] }, a)?.rule).to.equal("rules.urlAllow");
    expect(checkRules({ urlAllow: ["https://other.example/*"] }, { ...a, url: undefined })?.detail).to.match(/no url/);
    expect(checkRules({ labelsExclude: ["politics"] }, a)?.rule).to.equal("rules.labelsExclude");
    expect(checkRules({ labelsInclude: ["sport", "culture"] }, a)?.rule).to.equal("rules.labelsInclude");
    expect(checkRules({ labelsInclude: ["politics"] }, a)).to.equal(null);
    expect(checkRules({ types: { news: { max: 0.5 } } }, a)?.rule).to.equal("rules.types.news.max");
    expect(checkRules({ types: { sports: { min: 0.4 } } }, a)?.rule).to.equal("rules.types.sports.min");
    expect(checkRules({ types: { news: { min: 0.6 } } }, a)).to.equal(null);
  });
});

describe("articles admission (settings, limits, credit, rules, events)", function () {
  this.timeout(30_000);
  let dir: string;
  let authStore: AuthStore;
  let articleStore: ArticleStore;
  let auth: RunningService;
  let svc: RunningService;
  let bus: EventBus;
  let adminC: ReturnType<typeof rpcClient<typeof AuthService>>;
  let worker: ReturnType<typeof rpcClient<typeof ArticlesService>>;
  let pages: http.Server;
  let pagesUrl: string;
  let page = { status: 200, type: "text/html; charset=utf-8", body: SPORTS_HTML };
  const hooks: Array<{ headers: http.IncomingHttpHeaders; body: string }> = [];
  let n = 0;

  /** A fresh project with a full publisher token, so tests do not share limits. */
  async function project(settings?: object) {
    const id = `p${++n}`;
    await adminC.createProject({ id, name: id });
    const { token } = await adminC.issueToken({ projectId: id, scope: Scope.FULL });
    if (settings) await adminC.updateProjectSettings({ projectId: id, patchJson: JSON.stringify(settings) });
    return { id, client: rpcClient(ArticlesService, svc.url, { token }) };
  }
  const get = async (c: ReturnType<typeof rpcClient<typeof ArticlesService>>, id: string) => (await c.getArticle({ id })).article!;
  const jobsOf = (id: string) => bus.published.filter((j) => j.articleId === id);

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "articles-rules-"));
    authStore = await openEmbeddedAuthStore(dir);
    articleStore = await openEmbeddedArticleStore();
    auth = await startAuthService({ store: authStore, adminToken: ADMIN, internalToken: INTERNAL, log: logger("auth"), host: "127.0.0.1", port: 0, webhookTargets: { allowPrivate: (_h, address) => address === "127.0.0.1" } });
    bus = eventBus();
    pages = http.createServer((req, res) => {
      let body = "";
      req.on("data", (c) => (body += c));
      req.on("end", () => {
        if (req.url === "/hook") {
          hooks.push({ headers: req.headers, body });
          res.writeHead(204).end();
          return;
        }
        res.writeHead(page.status, { "content-type": page.type }).end(page.body);
      });
    });
    await new Promise<void>((r) => pages.listen(0, "127.0.0.1", r));
    pagesUrl = `http://127.0.0.1:${(pages.address() as AddressInfo).port}`;
    svc = await startArticlesService({
      store: articleStore,
      bus,
      auth: rpcClient(AuthService, auth.url),
      settingsFrom: rpcClient(AuthService, auth.url, { token: INTERNAL }),
      internalToken: INTERNAL,
      audioBaseUrl: "http://localhost/audio",
      log: logger("articles"),
      reconcile: false,
      schedule: false,
      // Only the test's own loopback server is reachable.
      fetchOptions: { allowPrivate: (_h, address) => address === "127.0.0.1" },
      webhook: { retries: 1, backoffMs: [50] },
    });
    adminC = rpcClient(AuthService, auth.url, { token: ADMIN });
    worker = rpcClient(ArticlesService, svc.url, { token: INTERNAL });
  });

  after(async () => {
    await svc?.close();
    await auth?.close();
    closeRpcClients();
    await new Promise((r) => pages?.close(r));
    await articleStore?.close();
    await authStore?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("parse: true shows parsed until synthesis, keeps the publisher's text, and the worker gets the cleaned text and content types", async () => {
    const p = await project();
    const { id } = await p.client.createArticle({ title: "Bayern beat Dortmund", text: SPORTS_HTML, parse: true });
    const a = await get(p.client, id);
    expect(a.status).to.equal(ArticleStatus.PARSED);
    expect(a.text).to.equal(SPORTS_HTML);
    const expected = extractMainContent(SPORTS_HTML).text;
    expect(a.types.map((t) => ({ name: t.name, score: t.score }))).to.deep.equal(classifyContent({ title: a.title, text: expected, lang: "en-US" }));
    expect(a.types.map((t) => t.name)).to.include("sports");
    expect(jobsOf(id)).to.have.length(1);
    const claim = await worker.claimAudioJob({ articleId: id, revision: 1n });
    expect(claim.article!.text).to.equal(expected);
    expect(claim.article!.text).not.to.match(/Buy cheap tickets|Photo: Agency|Home/);
    expect(claim.article!.parse).to.equal(false);
    expect((await get(p.client, id)).status).to.equal(ArticleStatus.PROCESSING);
  });

  it("rejects by rule before synthesis, records the rule, and an update that satisfies the rules un-rejects", async () => {
    const p = await project({ rules: { maxChars: 40, labelsExclude: ["sponsored"] } });
    const { id } = await p.client.createArticle({ title: "Short", text: "This text is far longer than forty characters allow." });
    expect((await get(p.client, id)).status).to.equal(ArticleStatus.REJECTED);
    expect(jobsOf(id)).to.deep.equal([]);
    const d = await worker.getArticleDecision({ projectId: p.id, articleId: id });
    expect(d).to.include({ rule: "rules.maxChars", status: ArticleStatus.REJECTED });
    expect(d.detail).to.match(/at most 40/);
    // A stale job for a rejected article is dropped by the worker.
    expect((await worker.claimAudioJob({ articleId: id, revision: 1n })).stale).to.equal(true);

    await p.client.updateArticle({ target: { case: "id", value: id }, title: "Short", text: "Fits now." });
    const a = await get(p.client, id);
    expect(a.status).to.equal(ArticleStatus.WAITING);
    expect(jobsOf(id)).to.deep.equal([{ articleId: id, projectId: p.id, revision: 2 }]);
    expect((await worker.getArticleDecision({ projectId: p.id, articleId: id })).rule).to.equal("");

    const ad = await p.client.createArticle({ title: "Deal", text: "Short.", labels: ["sponsored"] });
    expect((await worker.getArticleDecision({ projectId: p.id, articleId: ad.id })).rule).to.equal("rules.labelsExclude");
  });

  it("rejects on content-type scores", async () => {
    const p = await project({ rules: { types: { sports: { max: 0.5 } } } });
    const { id } = await p.client.createArticle({ title: "Bayern beat Dortmund 3-1", text: SPORTS_TEXT });
    const d = await worker.getArticleDecision({ projectId: p.id, articleId: id });
    expect(d.status).to.equal(ArticleStatus.REJECTED);
    expect(d.rule).to.equal("rules.types.sports.max");
    const other = await p.client.createArticle({ title: "Council meeting", text: "The council met on Monday to discuss the library budget." });
    expect((await get(p.client, other.id)).status).to.equal(ArticleStatus.WAITING);
  });

  it("limit_reached: beyond the daily limit articles wait, and are admitted oldest first when the limit allows", async () => {
    const p = await project({ dailyLimit: 2 });
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await p.client.createArticle({ title: `Item ${i}`, text: `Text number ${i}.` })).id);
    const statuses = async () => Promise.all(ids.map(async (id) => ArticleStatus[(await get(p.client, id)).status]));
    expect(await statuses()).to.deep.equal(["WAITING", "WAITING", "LIMIT_REACHED", "LIMIT_REACHED", "LIMIT_REACHED"]);
    expect((await worker.getArticleDecision({ projectId: p.id, articleId: ids[3] })).rule).to.equal("dailyLimit");
    // An update of a waiting article waits as well.
    await p.client.updateArticle({ target: { case: "id", value: ids[4] }, title: "Item 4", text: "Changed." });
    expect(ArticleStatus[(await get(p.client, ids[4])).status]).to.equal("LIMIT_REACHED");

    // The limit is enforced by the auth service, so a change applies at once.
    await adminC.updateProjectSettings({ projectId: p.id, patchJson: '{"dailyLimit":3}' });
    expect((await worker.readmitDeferred({ projectId: p.id })).admitted).to.equal(1);
    expect(await statuses()).to.deep.equal(["WAITING", "WAITING", "WAITING", "LIMIT_REACHED", "LIMIT_REACHED"]);
    expect(jobsOf(ids[2])).to.have.length(1);
    expect(jobsOf(ids[3])).to.have.length(0);
  });

  it("no_money: waits for credit, is admitted when credit is added, and a failed synthesis is refunded", async () => {
    const p = await project({ creditChars: 30 });
    const text = "Twenty-five characters..";
    const first = await p.client.createArticle({ title: "T", text }); // 1 + 24 = 25 characters
    const second = await p.client.createArticle({ title: "T", text });
    expect((await get(p.client, first.id)).status).to.equal(ArticleStatus.WAITING);
    expect((await get(p.client, second.id)).status).to.equal(ArticleStatus.NO_MONEY);
    expect((await worker.getArticleDecision({ projectId: p.id, articleId: second.id })).rule).to.equal("creditChars");
    const balance = async () => (await adminC.getProjectSettings({ projectId: p.id })).settings!.creditChars;
    expect(await balance()).to.equal(5n);

    await adminC.addCredit({ projectId: p.id, chars: 20n });
    expect((await worker.readmitDeferred({ projectId: p.id })).admitted).to.equal(1);
    expect((await get(p.client, second.id)).status).to.equal(ArticleStatus.WAITING);
    expect(await balance()).to.equal(0n);

    await worker.claimAudioJob({ articleId: first.id, revision: 1n });
    expect((await worker.failAudioJob({ articleId: first.id, revision: 1n, error: "engine broke" })).applied).to.equal(true);
    expect(await balance()).to.equal(25n);
    // A repeated failure report refunds nothing more.
    await worker.failAudioJob({ articleId: first.id, revision: 1n, error: "again" });
    expect(await balance()).to.equal(25n);
    // Editing an article whose synthesis has not started refunds the old revision and debits the new one.
    await p.client.updateArticle({ target: { case: "id", value: second.id }, title: "T", text: "Ten chars." });
    expect((await get(p.client, second.id)).status).to.equal(ArticleStatus.WAITING);
    expect(await balance()).to.equal(25n + 25n - 11n);
    // Deleting it before synthesis gives those characters back too.
    await p.client.deleteArticle({ id: second.id });
    expect(await balance()).to.equal(50n);
  });

  it("takes the project's default voice when the request names none", async () => {
    const p = await project({ defaultVoice: "de-DE-KatjaNeural", defaultLang: "de-DE" });
    const { id } = await p.client.createArticle({ title: "Hallo", text: "Guten Tag." });
    expect(await get(p.client, id)).to.include({ voice: "de-DE-KatjaNeural", lang: "de-DE" });
    const own = await p.client.createArticle({ title: "Hi", text: "Hello.", voice: "nova", lang: "en-US" });
    expect(await get(p.client, own.id)).to.include({ voice: "nova", lang: "en-US" });
  });

  it("hands the worker the project's loudness target as it was when the revision was admitted", async () => {
    const loud = await project({ loudness: { lufs: -16, truePeakDbtp: -1.5 } });
    const plain = await project();
    const claimed = async (articleId: string) => {
      const l = (await worker.claimAudioJob({ articleId, revision: 1n })).loudness;
      return l && { lufs: l.lufs, truePeakDbtp: l.truePeakDbtp };
    };
    const early = await loud.client.createArticle({ title: "Early", text: "Hello." });
    const other = await plain.client.createArticle({ title: "Plain", text: "Hello." });
    // Only the ceiling goes back to the deployment's; the articles service reads settings through a 2 s cache.
    await adminC.updateProjectSettings({ projectId: loud.id, patchJson: JSON.stringify({ loudness: { truePeakDbtp: null } }) });
    await new Promise((r) => setTimeout(r, 2_100));
    const late = await loud.client.createArticle({ title: "Late", text: "Hello." });

    expect(await claimed(early.id)).to.deep.equal({ lufs: -16, truePeakDbtp: -1.5 });
    expect(await claimed(late.id)).to.deep.equal({ lufs: -16, truePeakDbtp: undefined });
    expect(await claimed(other.id)).to.equal(undefined);
  });

  it("publishes every status change on the bus and delivers signed webhooks", async () => {
    const p = await project({ webhook: { url: `${pagesUrl}/hook`, secret: SECRET } });
    bus.events.length = 0;
    hooks.length = 0;
    const { id } = await p.client.createArticle({ title: "Hook", text: "Event text." });
    await worker.claimAudioJob({ articleId: id, revision: 1n });
    await worker.completeAudioJob({ articleId: id, revision: 1n, audio: { key: `${id}/1/full.mp3`, duration: 1 } });
    const mine = bus.events.filter((e) => e.data.articleId === id);
    expect(mine.map((e) => e.subject)).to.deep.equal(Array(3).fill(`articles.events.${p.id}`));
    expect(mine.map((e) => e.data.status)).to.deep.equal(["waiting", "processing", "ready"]);
    expect(mine[2].data).to.include({ type: "article.status", projectId: p.id, articleId: id, revision: 1 });
    await waitFor(() => hooks.length >= 3, "three webhook deliveries");
    for (const h of hooks) {
      expect(verifyWebhook(SECRET, h.headers["x-webhook-signature"] as string, h.body)).to.equal(true);
      expect(verifyWebhook("another-secret-0123456789", h.headers["x-webhook-signature"] as string, h.body)).to.equal(false);
    }
    expect(hooks.map((h) => JSON.parse(h.body).status).sort()).to.deep.equal(["processing", "ready", "waiting"]);
  });

  it("recrawl: unchanged content restores the status; changed content is parsed and re-audified; unsafe URLs are refused", async () => {
    const p = await project();
    page = { status: 200, type: "text/html; charset=utf-8", body: SPORTS_HTML };
    const { id } = await p.client.createArticle({ title: "Bayern beat Dortmund", text: SPORTS_HTML, parse: true, url: `${pagesUrl}/story` });
    await worker.claimAudioJob({ articleId: id, revision: 1n });
    await worker.completeAudioJob({ articleId: id, revision: 1n, audio: { key: `${id}/1/full.mp3`, duration: 1 } });
    bus.events.length = 0;

    const same = await worker.recrawlArticle({ projectId: p.id, articleId: id });
    expect(same).to.include({ changed: false, revision: 1n, status: ArticleStatus.READY });
    expect(bus.events.filter((e) => e.data.articleId === id).map((e) => e.data.status)).to.deep.equal(["recrawling", "ready"]);

    page = { ...page, body: SPORTS_HTML.replace("twice in the second half", "three times after the break") };
    const changed = await worker.recrawlArticle({ projectId: p.id, articleId: id });
    expect(changed).to.include({ changed: true, revision: 2n, status: ArticleStatus.PARSED });
    const a = await get(p.client, id);
    expect(a.text).to.equal(SPORTS_HTML);
    expect(jobsOf(id).map((j) => j.revision)).to.deep.equal([1, 2]);
    expect((await worker.claimAudioJob({ articleId: id, revision: 2n })).article!.text).to.contain("three times after the break");

    page = { status: 200, type: "application/pdf", body: "%PDF" };
    const notHtml = await failure(worker.recrawlArticle({ projectId: p.id, articleId: id }));
    expect(Code[notHtml.code]).to.equal("FailedPrecondition");
    expect((await get(p.client, id)).status).to.equal(ArticleStatus.PROCESSING);

    const internalUrl = await p.client.createArticle({ title: "Intranet", text: "x", url: "http://10.1.2.3/secret" });
    const unsafe = await failure(worker.recrawlArticle({ projectId: p.id, articleId: internalUrl.id }));
    expect(Code[unsafe.code]).to.equal("FailedPrecondition");
    expect((await get(p.client, internalUrl.id)).status).to.equal(ArticleStatus.WAITING);

    const pub = await failure(p.client.recrawlArticle({ projectId: p.id, articleId: id }));
    expect(Code[pub.code]).to.equal("PermissionDenied");
  });
});

describe("periodic recrawl", () => {
  it("recrawls only recent articles of projects that enabled it, once per period", async () => {
    const { periodicRecrawl } = await import("../../services/articles/admission/recrawl.js");
    const { UNBOUNDED } = await import("../../services/articles/admission/settings.js");
    const { createContentPool } = await import("../../services/articles/content/pool.js");
    const content = createContentPool();
    let body = SPORTS_HTML;
    const server = http.createServer((_req, res) => res.writeHead(200, { "content-type": "text/html" }).end(body));
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/x`;
    const store = await openEmbeddedArticleStore();
    const admitted: string[] = [];
    const deps = {
      store,
      admission: { admit: async (id: string) => (admitted.push(id), null), content },
      settings: {
        get: async (p: string) => ({ ...UNBOUNDED, recrawl: { enabled: p === "on", everyMinutes: 60, maxAgeHours: 24 } }),
        reserve: async () => ({ outcome: "reserved" as const, debited: false }),
        refund: async () => {},
        projects: async () => ["on", "off"],
      },
      emit: () => {},
      log: logger("recrawl-test"),
      fetchOptions: { allowPrivate: (_h: string, address: string) => address === "127.0.0.1" },
    };
    try {
      const now = Date.now();
      const mk = async (id: string, projectId: string, addedAgoH: number, text = SPORTS_HTML) => {
        await store.insert({ id, projectId, title: "T", text, url, parse: true, isRaw: false, voice: "alloy", lang: "en-US", labels: [] }, new Date(now - addedAgoH * 3_600_000));
        await store.claim(id, 1);
        await store.complete(id, 1, { audio: { key: "k", duration: 1 } });
      };
      await mk("recent-on", "on", 2);
      await mk("old-on", "on", 48);
      await mk("recent-off", "off", 2);
      body = SPORTS_HTML.replace("twice", "three times");
      await mk("steady-on", "on", 3, body);
      expect(await periodicRecrawl(deps, now)).to.equal(2);
      expect(admitted).to.deep.equal(["recent-on"]);
      expect(await store.getById("steady-on")).to.include({ revision: 1, status: "ready" });
      expect((await store.getById("recent-on"))?.revision).to.equal(2);
      expect((await store.getById("old-on"))?.revision).to.equal(1);
      expect((await store.getById("recent-off"))?.revision).to.equal(1);
      // Crawled just now: not again within the period, and again after it.
      expect(await periodicRecrawl(deps, now + 60_000)).to.equal(0);
      expect(await periodicRecrawl(deps, Date.now() + 61 * 60_000)).to.equal(1);
    } finally {
      await content.close();
      await store.close();
      await new Promise((r) => server.close(r));
    }
  });
});
