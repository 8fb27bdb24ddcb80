import { Readable } from "node:stream";
import { expect } from "chai";
import { ArticleStatus } from "../../gen/articles/v1/articles_pb.js";
import { compileSchema, ArticleResult, ArticleListResult, ErrorResult, IdResult } from "../../gateway/schemas.js";
import { logger } from "../../lib/log.js";
import { startGateway } from "../../gateway/app.js";
import { call, FULL, OTHER, READ, SECRET_DETAIL, startHarness, MemoryBlobs, type Harness } from "./support.js";
import { freePort } from "../../lib/net/free-port.js";

const isArticleResult = compileSchema(ArticleResult);
const isListResult = compileSchema(ArticleListResult);
const isError = compileSchema(ErrorResult);
const isIdResult = compileSchema(IdResult);

function expectFail(res: { status: number; body: any }, status: number, message: RegExp | string): void {
  expect(res.status, JSON.stringify(res.body)).to.equal(status);
  expect(isError(res.body), JSON.stringify(res.body)).to.equal(true);
  expect(res.body.result).to.equal(status >= 500 ? "error" : "fail");
  if (typeof message === "string") expect(res.body.message).to.include(message);
  else expect(res.body.message).to.match(message);
}

describe("gateway: article endpoints", function () {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(async () => {
    await h.close();
  });

  describe("success shapes", () => {
    it("creates an article and reads it back with externalId and explicit nulls", async () => {
      const created = await call(h, "POST", "/api/articles", { headers: FULL, json: { title: "Hello World", text: "Some text", labels: ["a", "b"] } });
      expect(created.status).to.equal(200);
      expect(isIdResult(created.body)).to.equal(true);

      const got = await call(h, "GET", `/api/articles/${created.body.id}`, { headers: READ });
      expect(got.status).to.equal(200);
      expect(isArticleResult(got.body), JSON.stringify(isArticleResult.errors)).to.equal(true);
      const a = got.body.article;
      expect(a).to.include({ id: created.body.id, title: "Hello World", text: "Some text", status: "waiting", isRaw: false, voice: "alloy", lang: "en-US" });
      expect(a.externalId).to.equal(null);
      expect(a.prompt).to.equal(null);
      expect(a.url).to.equal(null);
      expect(a.updated).to.equal(null);
      expect(a.labels).to.deep.equal(["a", "b"]);
      for (const absent of ["type", "audio", "audio_duration", "audio_preview", "audio_preview_duration", "error", "errors", "external_id"]) {
        expect(a, absent).not.to.have.property(absent);
      }
    });

    it("passes every create field through to the service", async () => {
      const body = {
        title: "Full",
        text: "<p>x</p>",
        url: "https://example.com/full",
        externalId: "ext-full",
        voice: "de-DE-KatjaNeural",
        lang: "de-DE",
        parse: true,
        isRaw: true,
        prompt: "calm",
        labels: ["x"],
      };
      const created = await call(h, "POST", "/api/articles", { headers: FULL, json: body });
      expect(created.status).to.equal(200);
      const a = (await call(h, "GET", "/api/articles_external_id/ext-full", { headers: FULL })).body.article;
      expect(a).to.include({ id: created.body.id, externalId: "ext-full", url: "https://example.com/full", voice: "de-DE-KatjaNeural", lang: "de-DE", isRaw: true, prompt: "calm" });
      expect(h.fake.articles.get(created.body.id)!.parse).to.equal(true);
    });

    it("shows audio fields and content types only for ready articles", async () => {
      const ready = h.fake.seed({
        status: ArticleStatus.READY,
        updated: 1_700_000_500n,
        types: [{ name: "news", score: 0.75 }],
        audio: { key: "a/1/full.mp3", url: "http://cdn/a/1/full.mp3", duration: 61.5 },
        audioPreview: { key: "a/1/preview.mp3", url: "http://cdn/a/1/preview.mp3", duration: 29.9 },
      });
      const a = (await call(h, "GET", `/api/articles/${ready.id}`, { headers: READ })).body.article;
      expect(a).to.include({ status: "ready", updated: 1_700_000_500, audio: "http://cdn/a/1/full.mp3", audio_duration: 61.5, audio_preview: "http://cdn/a/1/preview.mp3", audio_preview_duration: 29.9 });
      expect(a.type).to.deep.equal([{ Name: "news", Score: 0.75 }]);
      expect(a).not.to.have.property("error");

      // The same audio on an article being re-processed must not be offered.
      const busy = h.fake.seed({ status: ArticleStatus.PROCESSING, audio: { key: "b", url: "http://cdn/b.mp3", duration: 1 } });
      const b = (await call(h, "GET", `/api/articles/${busy.id}`, { headers: READ })).body.article;
      expect(b.status).to.equal("processing");
      expect(b).not.to.have.property("audio");
      expect(b).not.to.have.property("audio_duration");
    });

    it("shows error and errors only for errored articles, and lower-case multiword statuses", async () => {
      const errored = h.fake.seed({
        status: ArticleStatus.ERRORED,
        error: "provider down",
        errors: [{ error: "timeout", date: "2024-01-01T00:00:00.000Z" }, { error: "provider down", date: "2024-01-01T00:01:00.000Z" }],
      });
      const a = (await call(h, "GET", `/api/articles/${errored.id}`, { headers: READ })).body;
      expect(isArticleResult(a)).to.equal(true);
      expect(a.article.error).to.equal("provider down");
      expect(a.article.errors).to.deep.equal([
        { error: "timeout", date: "2024-01-01T00:00:00.000Z" },
        { error: "provider down", date: "2024-01-01T00:01:00.000Z" },
      ]);
      const limited = h.fake.seed({ status: ArticleStatus.LIMIT_REACHED, error: "old", errors: [{ error: "old", date: "2024-01-01T00:00:00Z" }] });
      const b = (await call(h, "GET", `/api/articles/${limited.id}`, { headers: READ })).body.article;
      expect(b.status).to.equal("limit_reached");
      expect(b).not.to.have.property("error");
      expect(b).not.to.have.property("errors");
    });

    it("lists with external_id, the total count and paging", async () => {
      const p = await startHarness();
      try {
        for (let i = 0; i < 13; i++) p.fake.seed({ title: `T${i}`, externalId: i === 12 ? "newest" : undefined });
        p.fake.seed({ title: "gone", status: ArticleStatus.DELETED });
        p.fake.seed({ title: "elsewhere", projectId: "p2" });

        const first = await call(p, "GET", "/api/articles", { headers: READ });
        expect(first.status).to.equal(200);
        expect(isListResult(first.body), JSON.stringify(isListResult.errors)).to.equal(true);
        expect(first.body.count).to.equal(13);
        expect(first.body.articles).to.have.length(10);
        expect(first.body.articles[0]).to.include({ title: "T12", external_id: "newest" });
        expect(first.body.articles[1].external_id).to.equal(null);
        expect(first.body.articles[0]).not.to.have.property("externalId");

        const second = await call(p, "GET", "/api/articles?limit=10&offset=10", { headers: READ });
        expect(second.body.articles.map((a: { title: string }) => a.title)).to.deep.equal(["T2", "T1", "T0"]);
        const all = await call(p, "GET", "/api/articles?limit=100", { headers: READ });
        expect(all.body.articles.map((a: { title: string }) => a.title)).not.to.include.members(["gone", "elsewhere"]);
      } finally {
        await p.close();
      }
    });

    it("lists filtered by status and by label over the whole project, with labels on every item and the filtered total", async () => {
      const p = await startHarness();
      try {
        for (let i = 0; i < 25; i++) {
          p.fake.seed({ title: `F${i}`, status: i % 2 ? ArticleStatus.READY : ArticleStatus.ERRORED, labels: i % 3 ? ["sport"] : ["news", "sport"] });
        }
        p.fake.seed({ title: "gone", status: ArticleStatus.DELETED, labels: ["news"] });
        const all = await call(p, "GET", "/api/articles", { headers: READ });
        expect(isListResult(all.body), JSON.stringify(isListResult.errors)).to.equal(true);
        expect(all.body.articles.slice(0, 2).map((a: { labels: string[] }) => a.labels)).to.deep.equal([["news", "sport"], ["sport"]]);

        const ready = await call(p, "GET", "/api/articles?status=ready&limit=10&offset=10", { headers: READ });
        expect(ready.status).to.equal(200);
        expect(isListResult(ready.body), JSON.stringify(isListResult.errors)).to.equal(true);
        expect(ready.body.count).to.equal(12);
        expect(ready.body.articles).to.have.length(2);
        expect(ready.body.articles.every((a: { status: string }) => a.status === "ready")).to.equal(true);
        expect(p.fake.lists.at(-1)).to.deep.include({ status: ArticleStatus.READY, limit: 10, offset: 10 });

        const news = await call(p, "GET", `/api/articles?label=${encodeURIComponent("news")}`, { headers: READ });
        expect(news.body.count).to.equal(9);
        expect(news.body.articles.map((a: { labels: string[] }) => a.labels)).to.deep.equal(Array(9).fill(["news", "sport"]));

        const both = await call(p, "GET", "/api/articles?status=errored&label=news", { headers: READ });
        expect(both.body.count).to.equal(5);
        expect(p.fake.lists.at(-1)).to.deep.include({ status: ArticleStatus.ERRORED, label: "news" });
      } finally {
        await p.close();
      }
    });

    it("refuses a bad list filter at the edge with a message naming it, without asking the service", async () => {
      const before = h.fake.lists.length;
      expectFail(await call(h, "GET", "/api/articles?status=finished", { headers: READ }), 400, "status: must be one of: waiting, processing, ready, errored, deleted");
      expectFail(await call(h, "GET", "/api/articles?status=READY", { headers: READ }), 400, "status: must be one of");
      expectFail(await call(h, "GET", "/api/articles?status=", { headers: READ }), 400, "status: must be one of");
      expectFail(await call(h, "GET", "/api/articles?status=ready&status=waiting", { headers: READ }), 400, "status: must be given once");
      expectFail(await call(h, "GET", "/api/articles?label=", { headers: READ }), 400, "label: must not be empty");
      expectFail(await call(h, "GET", "/api/articles?label=%20%20", { headers: READ }), 400, "label: must not be blank");
      expectFail(await call(h, "GET", `/api/articles?label=${"x".repeat(101)}`, { headers: READ }), 400, "label: must be at most 100 characters");
      expectFail(await call(h, "GET", "/api/articles?label=a&label=b", { headers: READ }), 400, "label: must be given once");
      expectFail(await call(h, "GET", "/api/articles?status=ready&limit=5", { headers: READ }), 400, "limit: must be >= 10");
      expect(h.fake.lists.length).to.equal(before);
    });

    it("updates by id: prompt null clears, labels replace, new externalId", async () => {
      const id = (await call(h, "POST", "/api/articles", { headers: FULL, json: { title: "Upd", text: "t", prompt: "p", labels: ["old1", "old2"] } })).body.id;
      const res = await call(h, "PUT", `/api/articles/${id}`, { headers: FULL, json: { title: "Upd 2", text: "t2", prompt: null, labels: ["new"], externalId: "upd-ext" } });
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({ result: "ok", id });
      const sent = h.fake.updates.at(-1)!;
      expect(sent.target).to.deep.include({ case: "id", value: id });
      expect(sent.prompt?.clear).to.equal(true);
      const a = (await call(h, "GET", `/api/articles/${id}`, { headers: READ })).body.article;
      expect(a).to.include({ title: "Upd 2", text: "t2", prompt: null, externalId: "upd-ext" });
      expect(a.labels).to.deep.equal(["new"]);
    });

    it("keeps prompt and labels when they are absent from an update", async () => {
      const id = (await call(h, "POST", "/api/articles", { headers: FULL, json: { title: "Keep", text: "t", prompt: "p", labels: ["l"] } })).body.id;
      await call(h, "PUT", `/api/articles/${id}`, { headers: FULL, json: { title: "Keep", text: "t2" } });
      const sent = h.fake.updates.at(-1)!;
      expect(sent.prompt).to.equal(undefined);
      expect(sent.labels).to.equal(undefined);
      const a = (await call(h, "GET", `/api/articles/${id}`, { headers: READ })).body.article;
      expect(a).to.include({ prompt: "p", text: "t2" });
      expect(a.labels).to.deep.equal(["l"]);
    });

    it("reads and updates by external id", async () => {
      const id = (await call(h, "POST", "/api/articles", { headers: FULL, json: { title: "Ext", text: "t", externalId: "ext/with space" } })).body.id;
      const enc = encodeURIComponent("ext/with space");
      const got = await call(h, "GET", `/api/articles_external_id/${enc}`, { headers: READ });
      expect(got.status).to.equal(200);
      expect(got.body.article).to.include({ id, externalId: "ext/with space" });
      const upd = await call(h, "PUT", `/api/articles_external_id/${enc}`, { headers: FULL, json: { title: "Ext 2", text: "t" } });
      expect(upd.body).to.deep.equal({ result: "ok", id });
      expect(h.fake.updates.at(-1)!.target).to.deep.include({ case: "externalId", value: "ext/with space" });
    });

    it("deletes, hides from the list, and a second delete is ok", async () => {
      const id = (await call(h, "POST", "/api/articles", { headers: FULL, json: { title: "Del", text: "t" } })).body.id;
      const del = await call(h, "DELETE", `/api/articles/${id}`, { headers: FULL });
      expect(del.status).to.equal(200);
      expect(del.body).to.deep.equal({ result: "ok" });
      const list = await call(h, "GET", "/api/articles?limit=100", { headers: READ });
      expect(list.body.articles.map((a: { id: string }) => a.id)).not.to.include(id);
      expect((await call(h, "GET", `/api/articles/${id}`, { headers: READ })).body.article.status).to.equal("deleted");
      expect((await call(h, "DELETE", `/api/articles/${id}`, { headers: FULL })).status).to.equal(200);
    });

    describe("lookup by original URL (#9)", () => {
      const original = "https://news.example.com/2024/01/story?id=7&ref=feed";
      let id: string;
      before(async () => {
        id = (await call(h, "POST", "/api/articles", { headers: FULL, json: { title: "By URL", text: "t", url: original } })).body.id;
      });

      it("finds it by the fully URL-encoded URL", async () => {
        const res = await call(h, "GET", `/api/articles_external_url/${encodeURIComponent(original)}`, { headers: READ });
        expect(res.status).to.equal(200);
        expect(res.body.article).to.include({ id, url: original });
      });

      it("finds it when the slashes arrived unencoded", async () => {
        const path = `/api/articles_external_url/https://news.example.com/2024/01/${encodeURIComponent("story?id=7&ref=feed")}`;
        const res = await call(h, "GET", path, { headers: READ });
        expect(res.status).to.equal(200);
        expect(res.body.article.id).to.equal(id);
      });

      it("finds it when the whole URL arrived unencoded, query string included", async () => {
        const res = await call(h, "GET", `/api/articles_external_url/${original}`, { headers: READ });
        expect(res.status).to.equal(200);
        expect(res.body.article.id).to.equal(id);
      });

      it("decodes only once (a %25 in the original URL survives)", async () => {
        const pct = "https://example.com/a%20b";
        const pid = (await call(h, "POST", "/api/articles", { headers: FULL, json: { title: "Pct", text: "t", url: pct } })).body.id;
        const res = await call(h, "GET", `/api/articles_external_url/${encodeURIComponent(pct)}`, { headers: READ });
        expect(res.body.article).to.include({ id: pid, url: pct });
      });

      it("answers 404 for an unknown URL and 400 for a non-URL", async () => {
        expectFail(await call(h, "GET", `/api/articles_external_url/${encodeURIComponent("https://nowhere.example/x")}`, { headers: READ }), 404, "not found");
        expectFail(await call(h, "GET", "/api/articles_external_url/not-a-url", { headers: READ }), 400, "externalUrl: must be an absolute http(s) URL");
        expectFail(await call(h, "GET", "/api/articles_external_url/https%3A%2F%2Fx%ZZ", { headers: READ }), 400, "externalUrl: is not correctly URL-encoded");
      });
    });

    it("echoes a sane x-request-id, forwards it upstream, and replaces an insane one", async () => {
      const res = await call(h, "GET", "/api/articles", { headers: { ...READ, "x-request-id": "trace-abc.123" } });
      expect(res.headers.get("x-request-id")).to.equal("trace-abc.123");
      expect(h.fake.seenHeaders.at(-1)!.get("x-request-id")).to.equal("trace-abc.123");
      expect(h.fake.seenHeaders.at(-1)!.get("authorization")).to.equal("Bearer read-token");
      const bad = await call(h, "GET", "/api/articles", { headers: { ...READ, "x-request-id": "x".repeat(300) } });
      expect(bad.headers.get("x-request-id")).to.match(/^[0-9a-f-]{36}$/);
    });
  });

  describe("validation failures → 400 naming the field", () => {
    const cases: [string, unknown, string][] = [
      ["missing title", { text: "t" }, "title: is required"],
      ["missing text", { title: "t" }, "text: is required"],
      ["empty title", { title: "", text: "t" }, "title: must not be empty"],
      ["title not a string", { title: 5, text: "t" }, "title: must be a string"],
      ["voice without lang", { title: "t", text: "t", voice: "echo" }, "lang: is required when voice is given"],
      ["lang without voice", { title: "t", text: "t", lang: "de-DE" }, "voice: is required when lang is given"],
      ["unknown voice", { title: "t", text: "t", voice: "robot", lang: "en-US" }, "voice: must be one of: echo"],
      ["unknown lang", { title: "t", text: "t", voice: "echo", lang: "fr-FR" }, "lang: must be one of: de-DE, en-GB, en-US"],
      ["voice/lang mismatch", { title: "t", text: "t", voice: "de-DE-ConradNeural", lang: "en-US" }, "lang: Voice 'de-DE-ConradNeural' does not speak 'en-US'; allowed: de-DE"],
      ["relative url", { title: "t", text: "t", url: "/story" }, "url: must be an absolute http(s) URL"],
      ["ftp url", { title: "t", text: "t", url: "ftp://example.com/x" }, "url: must be an absolute http(s) URL"],
      ["parse not boolean", { title: "t", text: "t", parse: "yes" }, "parse: must be a boolean"],
      ["labels not strings", { title: "t", text: "t", labels: ["ok", 3] }, "labels[1]: must be a string"],
      ["title null", { title: null, text: "t" }, "title: must be a string"],
      ["body is an array", [], "body: must be an object"],
      ["body is a string", "hello", "body: must be an object"],
    ];
    for (const [name, body, message] of cases) {
      it(`create: ${name}`, async () => {
        const before = h.fake.articles.size;
        expectFail(await call(h, "POST", "/api/articles", { headers: FULL, json: body }), 400, message);
        expect(h.fake.articles.size).to.equal(before);
      });
    }

    it("update: title/text required, prompt must be string or null", async () => {
      const id = h.fake.seed({}).id;
      expectFail(await call(h, "PUT", `/api/articles/${id}`, { headers: FULL, json: { text: "t" } }), 400, "title: is required");
      expectFail(await call(h, "PUT", `/api/articles/${id}`, { headers: FULL, json: { title: "t", text: "t", prompt: 5 } }), 400, "prompt: must be a string or null");
      expectFail(await call(h, "PUT", `/api/articles_external_id/x`, { headers: FULL, json: { title: "t", text: "t", voice: "nova" } }), 400, "lang: is required when voice is given");
    });

    it("unknown body fields are ignored, not rejected", async () => {
      const res = await call(h, "POST", "/api/articles", { headers: FULL, json: { title: "Extra", text: "t", colour: "blue" } });
      expect(res.status).to.equal(200);
    });

    const queries: [string, string][] = [
      ["limit=5", "limit: must be >= 10"],
      ["limit=101", "limit: must be <= 100"],
      ["limit=abc", "limit: must be a plain decimal integer"],
      ["limit=10.5", "limit: must be a plain decimal integer"],
      ["offset=-1", "offset: must be a plain decimal integer"],
      ["offset=x", "offset: must be a plain decimal integer"],
      ["limit=10&limit=20", "limit: must be given once"],
    ];
    for (const [q, message] of queries) {
      it(`list: ?${q}`, async () => {
        expectFail(await call(h, "GET", `/api/articles?${q}`, { headers: READ }), 400, message);
      });
    }

    it("duplicate externalId on create → 400", async () => {
      await call(h, "POST", "/api/articles", { headers: FULL, json: { title: "d", text: "t", externalId: "dup-1" } });
      expectFail(await call(h, "POST", "/api/articles", { headers: FULL, json: { title: "d", text: "t", externalId: "dup-1" } }), 400, "already used");
    });

    it("updating a deleted article → 400", async () => {
      const id = h.fake.seed({ status: ArticleStatus.DELETED }).id;
      expectFail(await call(h, "PUT", `/api/articles/${id}`, { headers: FULL, json: { title: "t", text: "t" } }), 400, "deleted");
    });
  });

  describe("malformed requests", () => {
    it("malformed JSON → 400", async () => {
      expectFail(await call(h, "POST", "/api/articles", { headers: { ...FULL, "content-type": "application/json" }, body: '{"title": "x",' }), 400, "not valid JSON");
    });
    it("non-JSON content type → 415", async () => {
      expectFail(await call(h, "POST", "/api/articles", { headers: { ...FULL, "content-type": "text/plain" }, body: '{"title":"x","text":"y"}' }), 415, "application/json");
    });
    it("JSON with a charset parameter is accepted", async () => {
      const res = await call(h, "POST", "/api/articles", { headers: { ...FULL, "content-type": "application/json; charset=utf-8" }, body: '{"title":"x","text":"y"}' });
      expect(res.status).to.equal(200);
    });
    it("missing body → 400", async () => {
      expectFail(await call(h, "POST", "/api/articles", { headers: FULL }), 400, "Request body is required");
    });
    it("invalid UTF-8 → 400", async () => {
      expectFail(await call(h, "POST", "/api/articles", { headers: { ...FULL, "content-type": "application/json" }, body: Buffer.from([0x7b, 0xff, 0x7d]) }), 400, "UTF-8");
    });
  });

  describe("auth", () => {
    it("401 when the header is missing, not Bearer, or unknown", async () => {
      const missing = await call(h, "GET", "/api/articles");
      expectFail(missing, 401, "Missing Authorization header");
      expect(missing.headers.get("www-authenticate")).to.match(/^Bearer/);
      expectFail(await call(h, "GET", "/api/articles", { headers: { authorization: "Token full-token" } }), 401, "Malformed Authorization header");
      expectFail(await call(h, "GET", "/api/articles", { headers: { authorization: "Bearer" } }), 401, "Malformed Authorization header");
      expectFail(await call(h, "GET", "/api/articles", { headers: { authorization: "Bearer nope" } }), 401, "Invalid API token");
      expectFail(await call(h, "POST", "/api/articles", { json: { title: "t", text: "t" } }), 401, "Missing Authorization header");
    });

    it("the gateway rejects a missing token without calling the service", async () => {
      const before = h.fake.seenHeaders.length;
      await call(h, "GET", "/api/articles/whatever");
      expect(h.fake.seenHeaders.length).to.equal(before);
    });

    it("403 for a read-only token on every write", async () => {
      const id = h.fake.seed({}).id;
      expectFail(await call(h, "POST", "/api/articles", { headers: READ, json: { title: "t", text: "t" } }), 403, "read-only");
      expectFail(await call(h, "PUT", `/api/articles/${id}`, { headers: READ, json: { title: "t", text: "t" } }), 403, "read-only");
      expectFail(await call(h, "PUT", `/api/articles_external_id/e`, { headers: READ, json: { title: "t", text: "t" } }), 403, "read-only");
      expectFail(await call(h, "DELETE", `/api/articles/${id}`, { headers: READ }), 403, "read-only");
      expect(h.fake.articles.get(id)!.status).to.equal(ArticleStatus.WAITING);
    });

    it("404 for another project's article", async () => {
      const id = h.fake.seed({}).id;
      expectFail(await call(h, "GET", `/api/articles/${id}`, { headers: OTHER }), 404, "not found");
    });
  });

  describe("not found and methods", () => {
    it("unknown article → 404 JSON", async () => {
      expectFail(await call(h, "GET", "/api/articles/does-not-exist", { headers: READ }), 404, "not found");
      expectFail(await call(h, "GET", "/api/articles_external_id/nope", { headers: READ }), 404, "not found");
      expectFail(await call(h, "DELETE", "/api/articles/does-not-exist", { headers: FULL }), 404, "not found");
    });
    it("unknown route → 404 JSON", async () => {
      const res = await call(h, "GET", "/api/nothing-here");
      expectFail(res, 404, "No such endpoint");
      expect(res.headers.get("content-type")).to.match(/^application\/json/);
      expectFail(await call(h, "GET", "/"), 404, "No such endpoint");
    });
    it("wrong method → 405 JSON with Allow", async () => {
      const res = await call(h, "PATCH", "/api/articles", { headers: FULL });
      expectFail(res, 405, "not allowed");
      expect(res.headers.get("allow")).to.include("POST");
      expectFail(await call(h, "POST", "/api/articles/abc", { headers: FULL }), 405, "not allowed");
    });
  });

  describe("upstream failures", () => {
    it("maps RPC codes and never leaks internal messages", async () => {
      const internal = await call(h, "POST", "/api/articles", { headers: FULL, json: { title: "boom-internal", text: "t" } });
      expectFail(internal, 500, /^Internal error \(request id [\w-]+\)$/);
      expect(internal.text).not.to.include(SECRET_DETAIL);
      expect(internal.body.message).to.include(internal.headers.get("x-request-id"));
      expectFail(await call(h, "POST", "/api/articles", { headers: FULL, json: { title: "boom-exhausted", text: "t" } }), 429, "upstream trouble");
      const unavailable = await call(h, "POST", "/api/articles", { headers: FULL, json: { title: "boom-unavailable", text: "t" } });
      expectFail(unavailable, 503, "unavailable");
      expect(unavailable.text).not.to.include(SECRET_DETAIL);
      expectFail(await call(h, "POST", "/api/articles", { headers: FULL, json: { title: "boom-deadline", text: "t" } }), 504, "did not answer in time");
    });

    it("an unreachable articles service → 503", async () => {
      const gw = await startGateway({ articlesUrl: `http://127.0.0.1:${await freePort()}`, healthTargets: [], blobs: new MemoryBlobs(), log: logger("gateway-test"), drainMs: 500 });
      try {
        const res = await fetch(`${gw.url}/api/articles`, { headers: READ });
        expect(res.status).to.equal(503);
        expect(await res.json()).to.include({ result: "error" });
      } finally {
        await gw.close();
      }
    });
  });

  describe("body size limit", () => {
    let small: Harness;
    before(async () => {
      small = await startHarness({ maxBodyBytes: 1024 });
    });
    after(async () => {
      await small.close();
    });

    it("accepts a body at the limit", async () => {
      const body = JSON.stringify({ title: "t", text: "x".repeat(1024 - 27) });
      expect(Buffer.byteLength(body)).to.be.at.most(1024);
      const res = await call(small, "POST", "/api/articles", { headers: { ...FULL, "content-type": "application/json" }, body });
      expect(res.status).to.equal(200);
    });

    it("413 JSON above the limit (declared length)", async () => {
      const before = small.fake.articles.size;
      const res = await call(small, "POST", "/api/articles", { headers: FULL, json: { title: "t", text: "x".repeat(4096) } });
      expectFail(res, 413, "larger than 1024 bytes");
      expect(small.fake.articles.size).to.equal(before);
    });

    it("413 JSON above the limit (chunked, no length)", async () => {
      const chunks = Array.from({ length: 8 }, (_, i) => Buffer.from(i === 0 ? '{"title":"t","text":"' : "y".repeat(512)));
      const res = await fetch(small.url("/api/articles"), {
        method: "PUT",
        headers: { ...FULL, "content-type": "application/json" },
        body: Readable.toWeb(Readable.from(chunks)) as ReadableStream,
        duplex: "half",
      } as RequestInit);
      expect(res.status).to.equal(405); // PUT on the collection: the method check comes first
      const res2 = await fetch(small.url("/api/articles"), {
        method: "POST",
        headers: { ...FULL, "content-type": "application/json" },
        body: Readable.toWeb(Readable.from(chunks)) as ReadableStream,
        duplex: "half",
      } as RequestInit);
      expect(res2.status).to.equal(413);
      expect(await res2.json()).to.deep.equal({ result: "fail", message: "Request body is larger than 1024 bytes" });
    });
  });
});
