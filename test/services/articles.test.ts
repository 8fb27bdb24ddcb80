// The articles service over real Connect on loopback, with a stand-in auth
// service (fixed token table) and a job bus that records publishes.
import { expect } from "chai";
import { Code, ConnectError, type Client } from "@connectrpc/connect";
import { create } from "@bufbuild/protobuf";
import {
  ArticleStatus,
  ArticlesService,
  LabelListSchema,
  PromptChangeSchema,
  type CreateArticleRequest,
} from "../../gen/articles/v1/articles_pb.js";
import { AuthService } from "../../gen/auth/v1/auth_pb.js";
import { logger } from "../../lib/log.js";
import { closeRpcClients, rpcClient } from "../../lib/rpc/client.js";
import type { RpcServer } from "../../lib/rpc/server.js";
import type { RunningService } from "../../lib/service.js";
import { startArticlesService } from "../../services/articles/app.js";
import { openEmbeddedArticleStore } from "../../services/articles/store/open.js";
import type { ArticleStore } from "../../services/articles/store/port.js";
import { startFakeAuth, type FakeTokens } from "../support/fake-auth.js";
import { recordingBus, type RecordingBus } from "../support/recording-bus.js";

const INTERNAL = "internal-token-for-tests-0123456789";
const TOKENS: FakeTokens = {
  "a-full-token": { projectId: "proj-a", scope: "full" },
  "a-read-token": { projectId: "proj-a", scope: "read" },
  "b-full-token": { projectId: "proj-b", scope: "full" },
};
const AUDIO_BASE = "https://cdn.example.test/audio";

type ArticlesClient = Client<typeof ArticlesService>;

async function rejects(p: Promise<unknown>, code: Code, message?: RegExp): Promise<ConnectError> {
  try {
    await p;
  } catch (e) {
    const ce = ConnectError.from(e);
    expect(Code[ce.code], ce.rawMessage).to.equal(Code[code]);
    if (message) expect(ce.rawMessage).to.match(message);
    return ce;
  }
  expect.fail(`expected ${Code[code]}, but the call succeeded`);
}

type CreateInit = Partial<Omit<CreateArticleRequest, "$typeName" | "$unknown">>;
const base = (over: CreateInit = {}) => ({ title: "Hello World", text: "Some words to speak.", ...over });

describe("articles service", function () {
  let auth: RpcServer;
  let svc: RunningService;
  let store: ArticleStore;
  let bus: RecordingBus;
  let a: ArticlesClient;
  let aRead: ArticlesClient;
  let b: ArticlesClient;
  let worker: ArticlesClient;
  let anon: ArticlesClient;
  let stranger: ArticlesClient;
  let n = 0;
  const ext = (p = "ext") => `${p}-${n++}-${Date.now().toString(36)}`;

  before(async () => {
    auth = await startFakeAuth(TOKENS);
    store = await openEmbeddedArticleStore();
    bus = recordingBus();
    svc = await startArticlesService({
      store,
      bus,
      auth: rpcClient(AuthService, auth.url),
      internalToken: INTERNAL,
      audioBaseUrl: AUDIO_BASE,
      log: logger("articles-test"),
      reconcile: false,
    });
    a = rpcClient(ArticlesService, svc.url, { token: "a-full-token" });
    aRead = rpcClient(ArticlesService, svc.url, { token: "a-read-token" });
    b = rpcClient(ArticlesService, svc.url, { token: "b-full-token" });
    worker = rpcClient(ArticlesService, svc.url, { token: INTERNAL });
    anon = rpcClient(ArticlesService, svc.url);
    stranger = rpcClient(ArticlesService, svc.url, { token: "no-such-token" });
  });
  after(async () => {
    await svc?.close();
    await auth?.close();
    closeRpcClients();
    await store?.close();
  });
  beforeEach(() => {
    bus.published.length = 0;
    bus.down = false;
  });

  describe("create and read", () => {
    it("creates an article with a slug id, defaults and revision 1, and queues its audio job", async () => {
      const { id } = await a.createArticle({ ...base({ title: "Grüße aus Köln: Ein Test!" }), labels: ["news"], url: "https://example.com/gruesse" });
      expect(id).to.match(/^gruesse-aus-koeln-ein-test-[a-z0-9]{8}$/);
      const { article } = await a.getArticle({ id });
      expect(article).to.include({ id, projectId: "proj-a", title: "Grüße aus Köln: Ein Test!", voice: "alloy", lang: "en-US", status: ArticleStatus.WAITING, revision: 1n });
      expect(article?.labels).to.deep.equal(["news"]);
      expect(Number(article?.added)).to.be.closeTo(Date.now() / 1000, 5);
      expect(article?.updated).to.equal(undefined);
      expect(article?.audio).to.equal(undefined);
      expect(bus.published).to.deep.equal([{ articleId: id, projectId: "proj-a", revision: 1 }]);
    });

    it("keeps a long title's slug within 48 characters", async () => {
      const { id } = await a.createArticle(base({ title: "word ".repeat(40) }));
      const slug = id.slice(0, -9);
      expect(slug.length).to.be.at.most(48);
      expect(slug).to.match(/^[a-z0-9]+(-[a-z0-9]+)*$/);
    });

    it("finds an article by externalId and by url, with the requested voice", async () => {
      const e = ext();
      const { id } = await a.createArticle({ ...base(), externalId: e, url: "https://example.com/find-me?x=1", voice: "de-DE-KatjaNeural", lang: "de-DE", prompt: "warm" });
      const byExt = await a.getArticleByExternalId({ externalId: e });
      expect(byExt.article).to.include({ id, externalId: e, voice: "de-DE-KatjaNeural", lang: "de-DE", prompt: "warm" });
      const byUrl = await a.getArticleByUrl({ url: "https://example.com/find-me?x=1" });
      expect(byUrl.article?.id).to.equal(id);
    });

    it("stores an IRI normalised and finds it by any spelling, for direct RPC callers too", async () => {
      const { id } = await a.createArticle({ ...base(), url: "https://Bücher.example/rpc/über-uns?q=ü" });
      expect((await a.getArticle({ id })).article?.url).to.equal("https://xn--bcher-kva.example/rpc/%C3%BCber-uns?q=%C3%BC");
      for (const url of ["https://bücher.example/rpc/über-uns?q=ü", "https://xn--bcher-kva.example/rpc/%c3%bcber-uns?q=%c3%bc", "HTTPS://BÜCHER.EXAMPLE/rpc/über-uns?q=ü"]) {
        expect((await a.getArticleByUrl({ url })).article?.id, url).to.equal(id);
      }
      // 2,048 characters as sent, but longer once percent-encoded.
      await rejects(a.createArticle({ ...base(), url: `https://example.com/${"ü".repeat(1000)}` }), Code.InvalidArgument, /url is too long once percent-encoded/);
    });

    it("answers NotFound for unknown ids", async () => {
      await rejects(a.getArticle({ id: "nope-12345678" }), Code.NotFound, /nope-12345678/);
      await rejects(a.getArticleByExternalId({ externalId: "nope" }), Code.NotFound);
      await rejects(a.getArticleByUrl({ url: "https://example.com/none" }), Code.NotFound);
    });

    it("still succeeds when the job cannot be published (left to the reconciler)", async () => {
      bus.down = true;
      const { id } = await a.createArticle(base());
      expect((await a.getArticle({ id })).article?.status).to.equal(ArticleStatus.WAITING);
      expect(bus.published).to.deep.equal([]);
    });
  });

  describe("validation", () => {
    const cases: [string, CreateInit, RegExp][] = [
      ["empty title", { title: "" }, /title/],
      ["blank title", { title: "   " }, /title/],
      ["title over 1,000 chars", { title: "t".repeat(1001) }, /title.*too long/],
      ["empty text", { text: "" }, /text/],
      ["text over 1,000,000 chars", { text: "x".repeat(1_000_001) }, /text.*too long/],
      ["relative url", { url: "/just/a/path" }, /url/],
      ["ftp url", { url: "ftp://example.com/a" }, /url/],
      ["url over 2,048 chars", { url: `https://example.com/${"a".repeat(2050)}` }, /url.*too long/],
      ["empty externalId", { externalId: "" }, /externalId/],
      ["externalId over 256 chars", { externalId: "e".repeat(257) }, /externalId/],
      ["voice without lang", { voice: "alloy" }, /voice and lang/],
      ["lang without voice", { lang: "en-US" }, /voice and lang/],
      ["unknown voice", { voice: "robot", lang: "en-US" }, /Unknown voice 'robot'/],
      ["voice not speaking the lang", { voice: "de-DE-ConradNeural", lang: "en-US" }, /does not speak 'en-US'/],
      ["101 labels", { labels: Array.from({ length: 101 }, (_, i) => `l${i}`) }, /labels/],
      ["empty label", { labels: ["ok", ""] }, /labels\[1\]/],
      ["label over 100 chars", { labels: ["l".repeat(101)] }, /labels\[0\]/],
      ["prompt over 4,096 chars", { prompt: "p".repeat(4097) }, /prompt/],
      // The same character rules as the REST schemas, for direct RPC callers.
      ["NUL in externalId", { externalId: "a\u0000b" }, /externalId must not contain/],
      ["RLO in externalId", { externalId: "invoice\u202Etxt.exe" }, /externalId must not contain/],
      ["LRM in a label", { labels: ["\u200Eok"] }, /labels\[0\] must not contain/],
      ["isolate control in the second label", { labels: ["ok", "a\u2068b"] }, /labels\[1\] must not contain/],
      ["blank first label", { labels: [" ", "ok"] }, /labels\[0\]/],
      ["bidi control in url", { url: "https://example.com/\u202Dx" }, /url must not contain/],
      ["NUL in title", { title: "a\u0000b" }, /title must not contain/],
    ];
    for (const [what, over, msg] of cases) {
      it(`rejects create with ${what}, storing nothing`, async () => {
        const before = (await a.listArticles({ limit: 100 })).count;
        await rejects(a.createArticle(base(over)), Code.InvalidArgument, msg);
        expect((await a.listArticles({ limit: 100 })).count).to.equal(before);
        expect(bus.published).to.deep.equal([]);
      });
    }

    it("accepts the limits exactly", async () => {
      const { id } = await a.createArticle({
        title: "t".repeat(1000),
        text: "x".repeat(1_000_000),
        url: `https://example.com/${"a".repeat(2048 - 20)}`,
        externalId: `e${"x".repeat(255 - 20)}${ext("")}`.slice(0, 256),
        labels: Array.from({ length: 100 }, (_, i) => `${i}`.padEnd(100, "l")),
        prompt: "p".repeat(4096),
      });
      expect((await a.getArticle({ id })).article?.text.length).to.equal(1_000_000);
    });

    it("rejects updates with bad fields or no target", async () => {
      const { id } = await a.createArticle(base());
      await rejects(a.updateArticle({ target: { case: "id", value: id }, title: "", text: "x" }), Code.InvalidArgument, /title/);
      await rejects(a.updateArticle({ target: { case: "id", value: id }, title: "x", text: "" }), Code.InvalidArgument, /text/);
      await rejects(a.updateArticle({ target: { case: "id", value: id }, title: "x", text: "y", url: "nope" }), Code.InvalidArgument, /url/);
      await rejects(a.updateArticle({ target: { case: "id", value: id }, title: "x", text: "y", voice: "echo" }), Code.InvalidArgument, /voice and lang/);
      await rejects(a.updateArticle({ target: { case: "id", value: id }, title: "x", text: "y", newExternalId: "" }), Code.InvalidArgument, /externalId/);
      await rejects(a.updateArticle({ title: "x", text: "y" }), Code.InvalidArgument, /id or externalId/);
      expect((await a.getArticle({ id })).article).to.include({ title: "Hello World", revision: 1n });
    });

    it("rejects empty lookups", async () => {
      await rejects(a.getArticle({ id: "" }), Code.InvalidArgument, /id/);
      await rejects(a.getArticleByExternalId({ externalId: "" }), Code.InvalidArgument, /externalId/);
      await rejects(a.getArticleByUrl({ url: "" }), Code.InvalidArgument, /url/);
      await rejects(a.deleteArticle({ id: "" }), Code.InvalidArgument, /id/);
    });

    it("rejects an update to an externalId with bidi controls", async () => {
      const { id } = await a.createArticle(base());
      await rejects(a.updateArticle({ target: { case: "id", value: id }, title: "x", text: "y", newExternalId: "a\u2069" }), Code.InvalidArgument, /externalId must not contain/);
    });
  });

  describe("externalId uniqueness", () => {
    it("rejects a duplicate externalId on create, even from another project", async () => {
      const e = ext();
      await a.createArticle({ ...base(), externalId: e });
      await rejects(a.createArticle({ ...base(), externalId: e }), Code.AlreadyExists, new RegExp(`externalId '${e}' is already used`));
      await rejects(b.createArticle({ ...base(), externalId: e }), Code.AlreadyExists);
    });

    it("lets exactly one of twelve concurrent creates with one externalId win", async () => {
      const e = ext("race");
      const results = await Promise.allSettled(Array.from({ length: 12 }, () => a.createArticle({ ...base(), externalId: e })));
      const ok = results.filter((r) => r.status === "fulfilled");
      const codes = results.filter((r): r is PromiseRejectedResult => r.status === "rejected").map((r) => ConnectError.from(r.reason).code);
      expect(ok).to.have.length(1);
      expect(codes).to.deep.equal(Array(11).fill(Code.AlreadyExists));
      expect((await a.getArticleByExternalId({ externalId: e })).article?.id).to.equal((ok[0] as PromiseFulfilledResult<{ id: string }>).value.id);
    });

    it("rejects an update to an externalId in use and changes nothing", async () => {
      const taken = ext();
      await b.createArticle({ ...base(), externalId: taken });
      const { id } = await a.createArticle(base());
      bus.published.length = 0;
      await rejects(a.updateArticle({ target: { case: "id", value: id }, title: "New", text: "New", newExternalId: taken }), Code.AlreadyExists, /already used/);
      expect((await a.getArticle({ id })).article).to.include({ title: "Hello World", revision: 1n });
      expect(bus.published).to.deep.equal([]);
    });
  });

  describe("batched creates (CreateArticles, the gateway's group commit)", () => {
    it("answers each item as CreateArticle would, in order, and stores and queues only the good ones", async () => {
      const used = ext("batch-used");
      await a.createArticle(base({ externalId: used }));
      const twin = ext("batch-twin");
      const items = [
        base({ title: "Batch one", externalId: ext("batch") }),
        base({ title: "" }),
        base({ title: "Batch three", externalId: used }),
        base({ title: "Batch four", externalId: twin }),
        base({ title: "Batch five", externalId: twin }),
        base({ title: "Batch six", voice: "no-such-voice" }),
        base({ title: "Batch seven" }),
      ].map((article, i) => ({ article, requestId: `req-batch-${i}` }));
      const before = bus.published.length;
      const { results } = await a.createArticles({ items });
      expect(results).to.have.length(7);
      const ok = (i: number) => (results[i].outcome.case === "id" ? results[i].outcome.value : expect.fail(`item ${i}: ${JSON.stringify(results[i].outcome.value)}`));
      const err = (i: number) => (results[i].outcome.case === "error" ? results[i].outcome.value : expect.fail(`item ${i} succeeded`));
      expect(ok(0)).to.match(/^batch-one-/);
      expect(Code[err(1).code]).to.equal("InvalidArgument");
      expect(err(1).message).to.match(/title/);
      expect(Code[err(2).code]).to.equal("AlreadyExists");
      expect(err(2).message).to.equal(`externalId '${used}' is already used`);
      // Two items of one batch with one externalId: exactly one wins.
      const twins = [results[3], results[4]].map((r) => r.outcome.case);
      expect(twins.sort()).to.deep.equal(["error", "id"]);
      expect(Code[err(5).code]).to.equal("InvalidArgument");
      expect(ok(6)).to.match(/^batch-seven-/);

      for (const i of [0, 6]) expect((await a.getArticle({ id: ok(i) })).article?.projectId).to.equal("proj-a");
      const queued = bus.published.slice(before);
      expect(queued.map((j) => j.articleId).sort()).to.deep.equal([ok(0), ok(6), results[3].outcome.case === "id" ? ok(3) : ok(4)].sort());
      // Each job carries the request id of its own item.
      expect(queued.find((j) => j.articleId === ok(6))?.requestId).to.equal("req-batch-6");
    });

    it("refuses the whole call for a read-only or unknown token, and an empty or oversized batch", async () => {
      const one = [{ article: base(), requestId: "r" }];
      await rejects(aRead.createArticles({ items: one }), Code.PermissionDenied);
      await rejects(stranger.createArticles({ items: one }), Code.Unauthenticated);
      await rejects(a.createArticles({ items: [] }), Code.InvalidArgument, /1 to 64/);
      await rejects(a.createArticles({ items: Array.from({ length: 65 }, () => one[0]) }), Code.InvalidArgument, /1 to 64/);
    });

    it("a taken externalId names the article that holds it (ItemError.existing_id), for re-run imports", async () => {
      const used = ext();
      const { id } = await a.createArticle({ ...base(), externalId: used });
      const { results } = await a.createArticles({ items: [{ article: { ...base(), externalId: used }, requestId: "r" }] });
      const outcome = results[0].outcome;
      expect(outcome.case).to.equal("error");
      expect(outcome.case === "error" && outcome.value).to.deep.include({ code: Code.AlreadyExists, existingId: id });
    });

    it("project_id: the internal token creates for the project it names; a publisher may not name another project", async () => {
      const one = [{ article: base({ title: "Operator import" }), requestId: "r" }];
      const { results } = await worker.createArticles({ projectId: "proj-b", items: one });
      const id = results[0].outcome.case === "id" ? results[0].outcome.value : expect.fail(JSON.stringify(results[0].outcome.value));
      expect((await b.getArticle({ id })).article?.projectId).to.equal("proj-b");
      await rejects(a.getArticle({ id }), Code.NotFound);
      await rejects(worker.createArticles({ items: one }), Code.InvalidArgument, /projectId/);
      await rejects(a.createArticles({ projectId: "proj-b", items: one }), Code.PermissionDenied);
      // Naming its own project is fine.
      const own = await a.createArticles({ projectId: "proj-a", items: one });
      expect(own.results[0].outcome.case).to.equal("id");
    });
  });

  describe("update", () => {
    it("changes content, keeps absent optionals, replaces labels, clears the prompt, bumps the revision and re-queues", async () => {
      const e = ext();
      const { id } = await a.createArticle({ ...base(), externalId: e, url: "https://example.com/u", voice: "nova", lang: "de-DE", prompt: "p", labels: ["a", "b"], isRaw: true });
      const r = await a.updateArticle({
        target: { case: "id", value: id },
        title: "Updated",
        text: "New text",
        labels: create(LabelListSchema, { values: ["c"] }),
        prompt: create(PromptChangeSchema, { clear: true }),
      });
      expect(r.id).to.equal(id);
      const { article } = await a.getArticle({ id });
      expect(article).to.include({ title: "Updated", text: "New text", url: "https://example.com/u", externalId: e, voice: "nova", lang: "de-DE", isRaw: true, revision: 2n, status: ArticleStatus.WAITING });
      expect(article?.prompt).to.equal(undefined);
      expect(article?.labels).to.deep.equal(["c"]);
      expect(bus.published).to.deep.equal([
        { articleId: id, projectId: "proj-a", revision: 1 },
        { articleId: id, projectId: "proj-a", revision: 2 },
      ]);
    });

    it("keeps labels when absent and clears them with an empty list", async () => {
      const { id } = await a.createArticle({ ...base(), labels: ["keep"] });
      await a.updateArticle({ target: { case: "id", value: id }, title: "x", text: "y" });
      expect((await a.getArticle({ id })).article?.labels).to.deep.equal(["keep"]);
      await a.updateArticle({ target: { case: "id", value: id }, title: "x", text: "y", labels: create(LabelListSchema, { values: [] }) });
      expect((await a.getArticle({ id })).article?.labels).to.deep.equal([]);
    });

    it("addresses the article by externalId and can give it a new one", async () => {
      const e = ext();
      const fresh = ext("fresh");
      const { id } = await a.createArticle({ ...base(), externalId: e });
      const r = await a.updateArticle({ target: { case: "externalId", value: e }, title: "Via ext", text: "t", newExternalId: fresh, prompt: create(PromptChangeSchema, { value: "new prompt" }) });
      expect(r.id).to.equal(id);
      const { article } = await a.getArticleByExternalId({ externalId: fresh });
      expect(article).to.include({ id, title: "Via ext", prompt: "new prompt", revision: 2n });
      await rejects(a.getArticleByExternalId({ externalId: e }), Code.NotFound);
    });

    it("answers NotFound for an unknown target", async () => {
      await rejects(a.updateArticle({ target: { case: "id", value: "missing-00000000" }, title: "x", text: "y" }), Code.NotFound);
      await rejects(a.updateArticle({ target: { case: "externalId", value: "missing" }, title: "x", text: "y" }), Code.NotFound);
    });
  });

  describe("delete", () => {
    it("keeps a deleted article readable, never lists it, refuses updates, allows deleting again, and keeps its externalId reserved", async () => {
      const e = ext();
      const url = `https://example.com/${ext("del")}`;
      const { id } = await a.createArticle({ ...base(), externalId: e, url });
      const before = (await a.listArticles({})).count;
      await a.deleteArticle({ id });
      expect((await a.getArticle({ id })).article?.status).to.equal(ArticleStatus.DELETED);
      expect((await a.getArticleByExternalId({ externalId: e })).article?.status).to.equal(ArticleStatus.DELETED);
      expect((await a.getArticleByUrl({ url })).article?.status).to.equal(ArticleStatus.DELETED);
      const list = await a.listArticles({ limit: 100 });
      expect(list.count).to.equal(before - 1n);
      expect(list.articles.map((x) => x.id)).not.to.include(id);
      await rejects(a.updateArticle({ target: { case: "id", value: id }, title: "x", text: "y" }), Code.InvalidArgument, /deleted/);
      await rejects(a.updateArticle({ target: { case: "externalId", value: e }, title: "x", text: "y" }), Code.InvalidArgument, /deleted/);
      await a.deleteArticle({ id });
      await rejects(a.createArticle({ ...base(), externalId: e }), Code.AlreadyExists);
      await rejects(a.deleteArticle({ id: "missing-00000000" }), Code.NotFound);
    });
  });

  describe("paging", () => {
    let proj: ArticlesClient;
    const ids: string[] = [];
    before(async function () {
      this.timeout(20_000);
      // A project of its own, so other tests' articles do not shift the pages.
      TOKENS["paging-token"] = { projectId: "proj-paging", scope: "full" };
      proj = rpcClient(ArticlesService, svc.url, { token: "paging-token" });
      ids.push((await proj.createArticle(base({ title: "oldest" }))).id);
      // Unix-second timestamps: the wait makes the first article strictly older than the rest.
      await new Promise((r) => setTimeout(r, 1100));
      for (let i = 1; i < 25; i++) ids.push((await proj.createArticle(base({ title: `article ${i}` }))).id);
    });

    it("pages 25 articles by 10, newest first, with the total count", async () => {
      const pages = [await proj.listArticles({}), await proj.listArticles({ limit: 10, offset: 10 }), await proj.listArticles({ limit: 10, offset: 20 })];
      expect(pages.map((p) => p.count)).to.deep.equal([25n, 25n, 25n]);
      expect(pages.map((p) => p.articles.length)).to.deep.equal([10, 10, 5]);
      const all = pages.flatMap((p) => p.articles);
      expect(new Set(all.map((x) => x.id))).to.deep.equal(new Set(ids));
      // Newest first: creation order reversed, also among those created within one second (never by id).
      expect(all.map((x) => x.id)).to.deep.equal([...ids].reverse());
      expect((await proj.listArticles({ limit: 100 })).articles).to.have.length(25);
      expect((await proj.listArticles({ limit: 10, offset: 30 })).articles).to.have.length(0);
    });

    it("rejects limit 9, limit 101 and offset -1", async () => {
      await rejects(proj.listArticles({ limit: 9 }), Code.InvalidArgument, /limit/);
      await rejects(proj.listArticles({ limit: 101 }), Code.InvalidArgument, /limit/);
      await rejects(proj.listArticles({ offset: -1 }), Code.InvalidArgument, /offset/);
    });

    it("filters by status and by label where the data lives: the filtered total, its pages, and bad filters refused", async () => {
      TOKENS["filter-token"] = { projectId: "proj-filters", scope: "full" };
      const f = rpcClient(ArticlesService, svc.url, { token: "filter-token" });
      for (let i = 0; i < 12; i++) await f.createArticle(base({ title: `f ${i}`, labels: i % 3 === 0 ? ["news"] : ["sport"] }));
      const news = [await f.listArticles({ label: "news" }), await f.listArticles({ label: "news", offset: 10 })];
      expect(news.map((p) => p.count)).to.deep.equal([4n, 4n]);
      expect(news[0].articles.map((a) => a.labels)).to.deep.equal(Array(4).fill(["news"]));
      const waiting = (await f.listArticles({ status: ArticleStatus.WAITING, label: "sport" })).count;
      const ready = (await f.listArticles({ status: ArticleStatus.READY, label: "sport" })).count;
      const processing = (await f.listArticles({ status: ArticleStatus.PROCESSING, label: "sport" })).count;
      expect(waiting + ready + processing).to.equal(8n);
      expect((await f.listArticles({ status: ArticleStatus.DELETED })).count).to.equal(0n);
      // Another project's labels are not this one's.
      expect((await proj.listArticles({ label: "news" })).count).to.equal(0n);
      await rejects(f.listArticles({ status: ArticleStatus.UNSPECIFIED }), Code.InvalidArgument, /status must be one of/);
      await rejects(f.listArticles({ label: " " }), Code.InvalidArgument, /label must be 1 to 100 characters/);
      await rejects(f.listArticles({ label: "x".repeat(101) }), Code.InvalidArgument, /label/);
    });
  });

  describe("tenant isolation", () => {
    it("never lets project B read, find, list, update or delete project A's article", async () => {
      const e = ext();
      const url = `https://example.com/${ext("iso")}`;
      const { id } = await a.createArticle({ ...base({ title: "Secret" }), externalId: e, url });
      await rejects(b.getArticle({ id }), Code.NotFound);
      await rejects(b.getArticleByExternalId({ externalId: e }), Code.NotFound);
      await rejects(b.getArticleByUrl({ url }), Code.NotFound);
      await rejects(b.updateArticle({ target: { case: "id", value: id }, title: "Hacked", text: "x" }), Code.NotFound);
      await rejects(b.updateArticle({ target: { case: "externalId", value: e }, title: "Hacked", text: "x" }), Code.NotFound);
      await rejects(b.deleteArticle({ id }), Code.NotFound);
      const listed = await b.listArticles({ limit: 100 });
      expect(listed.articles.every((x) => x.projectId === "proj-b")).to.equal(true);
      expect(listed.articles.map((x) => x.id)).not.to.include(id);
      expect((await a.getArticle({ id })).article).to.include({ title: "Secret", status: ArticleStatus.WAITING, revision: 1n });
    });
  });

  describe("credentials", () => {
    it("lets a read-only token read but not create, update or delete", async () => {
      const { id } = await a.createArticle(base());
      expect((await aRead.getArticle({ id })).article?.id).to.equal(id);
      expect((await aRead.listArticles({})).count > 0n).to.equal(true);
      await rejects(aRead.createArticle(base()), Code.PermissionDenied, /read-only/);
      await rejects(aRead.updateArticle({ target: { case: "id", value: id }, title: "x", text: "y" }), Code.PermissionDenied);
      await rejects(aRead.deleteArticle({ id }), Code.PermissionDenied);
      expect((await a.getArticle({ id })).article).to.include({ status: ArticleStatus.WAITING, revision: 1n });
    });

    it("answers Unauthenticated without a token or with an unknown one", async () => {
      await rejects(anon.listArticles({}), Code.Unauthenticated, /Authorization/);
      await rejects(stranger.listArticles({}), Code.Unauthenticated, /Invalid API token/);
    });

    it("refuses publisher tokens on worker calls and the internal token on publisher calls", async () => {
      const { id } = await a.createArticle(base());
      for (const c of [a, aRead]) {
        await rejects(c.claimAudioJob({ articleId: id, revision: 1n }), Code.PermissionDenied);
        await rejects(c.reportAudioStatus({ articleId: id, revision: 1n, status: ArticleStatus.RETRY, error: "x" }), Code.PermissionDenied);
        await rejects(c.completeAudioJob({ articleId: id, revision: 1n, audio: { key: "k", duration: 1 } }), Code.PermissionDenied);
        await rejects(c.failAudioJob({ articleId: id, revision: 1n, error: "x" }), Code.PermissionDenied);
      }
      await rejects(worker.getArticle({ id }), Code.PermissionDenied);
      expect((await a.getArticle({ id })).article?.status).to.equal(ArticleStatus.WAITING);
    });
  });

  describe("audio lifecycle (worker calls)", () => {
    it("claims the current revision, marks it processing and hands over the content", async () => {
      const { id } = await a.createArticle({ ...base(), prompt: "slow" });
      const stale = await worker.claimAudioJob({ articleId: id, revision: 2n });
      expect(stale.stale).to.equal(true);
      const r = await worker.claimAudioJob({ articleId: id, revision: 1n });
      expect(r.stale).to.equal(false);
      expect(r.article).to.include({ id, text: "Some words to speak.", prompt: "slow", voice: "alloy", status: ArticleStatus.PROCESSING });
      expect((await a.getArticle({ id })).article?.status).to.equal(ArticleStatus.PROCESSING);
      expect((await worker.claimAudioJob({ articleId: "gone-00000000", revision: 1n })).stale).to.equal(true);
    });

    it("discards a result for an older revision and applies the current one with audio URLs", async () => {
      const { id } = await a.createArticle(base());
      await worker.claimAudioJob({ articleId: id, revision: 1n });
      await a.updateArticle({ target: { case: "id", value: id }, title: "v2", text: "second" });
      const late = await worker.completeAudioJob({ articleId: id, revision: 1n, audio: { key: `${id}/1/full.mp3`, duration: 10 }, audioPreview: { key: `${id}/1/preview.mp3`, duration: 3 } });
      expect(late.applied).to.equal(false);
      let { article } = await a.getArticle({ id });
      expect(article).to.include({ status: ArticleStatus.WAITING, revision: 2n });
      expect(article?.audio).to.equal(undefined);

      const done = await worker.completeAudioJob({ articleId: id, revision: 2n, audio: { key: `${id}/2/full.mp3`, duration: 12.5 }, audioPreview: { key: `${id}/2/preview.mp3`, duration: 4 }, provider: "local" });
      expect(done.applied).to.equal(true);
      ({ article } = await a.getArticle({ id }));
      expect(article?.status).to.equal(ArticleStatus.READY);
      expect(article?.audio).to.include({ key: `${id}/2/full.mp3`, url: `${AUDIO_BASE}/${id}/2/full.mp3`, duration: 12.5 });
      expect(article?.audioPreview).to.include({ url: `${AUDIO_BASE}/${id}/2/preview.mp3`, duration: 4 });
      expect(Number(article?.updated)).to.be.closeTo(Date.now() / 1000, 5);
      expect((await worker.claimAudioJob({ articleId: id, revision: 2n })).stale).to.equal(true);
    });

    it("never lets a late result bring back a deleted article", async () => {
      const { id } = await a.createArticle(base());
      await worker.claimAudioJob({ articleId: id, revision: 1n });
      await a.deleteArticle({ id });
      expect((await worker.completeAudioJob({ articleId: id, revision: 1n, audio: { key: "k.mp3", duration: 1 } })).applied).to.equal(false);
      expect((await worker.failAudioJob({ articleId: id, revision: 1n, error: "late" })).applied).to.equal(false);
      expect((await worker.reportAudioStatus({ articleId: id, revision: 1n, status: ArticleStatus.RETRY })).applied).to.equal(false);
      expect((await a.getArticle({ id })).article?.status).to.equal(ArticleStatus.DELETED);
    });

    it("records retries and a final failure as errored with the error history", async () => {
      const { id } = await a.createArticle(base());
      await worker.claimAudioJob({ articleId: id, revision: 1n });
      expect((await worker.reportAudioStatus({ articleId: id, revision: 1n, status: ArticleStatus.RETRY, error: "provider timeout" })).applied).to.equal(true);
      let { article } = await a.getArticle({ id });
      expect(article?.status).to.equal(ArticleStatus.RETRY);
      expect((await worker.reportAudioStatus({ articleId: id, revision: 1n, status: ArticleStatus.FALLBACK })).applied).to.equal(true);
      expect((await worker.failAudioJob({ articleId: id, revision: 1n, error: "all providers failed" })).applied).to.equal(true);
      ({ article } = await a.getArticle({ id }));
      expect(article).to.include({ status: ArticleStatus.ERRORED, error: "all providers failed" });
      expect(article?.errors.map((x) => x.error)).to.deep.equal(["provider timeout", "all providers failed"]);
      for (const x of article?.errors ?? []) expect(new Date(x.date).toISOString()).to.equal(x.date);
    });

    it("rejects malformed worker calls", async () => {
      const { id } = await a.createArticle(base());
      await rejects(worker.reportAudioStatus({ articleId: id, revision: 1n, status: ArticleStatus.READY }), Code.InvalidArgument, /status/);
      await rejects(worker.completeAudioJob({ articleId: id, revision: 1n }), Code.InvalidArgument, /audio/);
      await rejects(worker.completeAudioJob({ articleId: id, revision: 1n, audio: { key: "", duration: 1 } }), Code.InvalidArgument, /audio.key/);
      await rejects(worker.completeAudioJob({ articleId: id, revision: 1n, audio: { key: "k", duration: -1 } }), Code.InvalidArgument, /duration/);
      await rejects(worker.claimAudioJob({ articleId: id, revision: 0n }), Code.InvalidArgument, /revision/);
      await rejects(worker.claimAudioJob({ articleId: "", revision: 1n }), Code.InvalidArgument, /articleId/);
      expect((await a.getArticle({ id })).article?.status).to.equal(ArticleStatus.WAITING);
    });
  });

  describe("store outage", () => {
    it("answers Internal with a plain message, never the store's error text", async () => {
      const broken = new Proxy(store, {
        get: (target, prop) =>
          prop === "list" || prop === "insert" ? async () => { throw new Error("connection to mongodb://admin:hunter2@db lost"); } : Reflect.get(target, prop),
      });
      const other = await startArticlesService({ store: broken, bus, auth: rpcClient(AuthService, auth.url), internalToken: INTERNAL, audioBaseUrl: AUDIO_BASE, log: logger("articles-test"), reconcile: false });
      try {
        const c = rpcClient(ArticlesService, other.url, { token: "a-full-token" });
        const e1 = await rejects(c.listArticles({}), Code.Internal, /Internal error/);
        const e2 = await rejects(c.createArticle(base()), Code.Internal, /Internal error/);
        for (const e of [e1, e2]) expect(e.rawMessage).not.to.match(/hunter2|mongodb/);
      } finally {
        await other.close();
      }
    });
  });

  describe("interoperability", () => {
    it("serves GetArticle over the Connect JSON protocol on plain HTTP/1.1", async () => {
      const { id } = await a.createArticle({ ...base({ title: "Plain JSON" }), labels: ["x"] });
      const call = (token: string) =>
        fetch(`${svc.url}/articles.v1.ArticlesService/GetArticle`, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
          body: JSON.stringify({ id }),
        });
      const res = await call("a-full-token");
      expect(res.status).to.equal(200);
      expect(res.headers.get("content-type")).to.match(/^application\/json/);
      const body = (await res.json()) as { article: Record<string, unknown> };
      expect(body.article).to.include({ id, projectId: "proj-a", title: "Plain JSON", status: "ARTICLE_STATUS_WAITING", voice: "alloy", lang: "en-US", revision: "1" });
      expect(body.article.labels).to.deep.equal(["x"]);
      expect(Number(body.article.added)).to.be.closeTo(Date.now() / 1000, 5);

      const other = await call("b-full-token");
      expect(other.status).to.equal(404);
      expect(((await other.json()) as { code: string }).code).to.equal("not_found");
    });
  });
});
