// The public API end to end on the embedded default: the real gateway, the
// real services (calling each other in-process, and over loopback HTTP/2 after
// the restart), the embedded stores, the in-process
// bus and the local synthesizer, exercised only through HTTP.
import { expect } from "chai";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { startEmbedded, type Embedded } from "../../launch/embedded.js";
import { inProcessEndpoint } from "../../lib/rpc/in-process.js";
import { mp3Duration, parseFrames } from "../../services/audio/mp3/index.js";
import { api, waitFor } from "../support/http.js";
import { ROOMY_RATE_LIMITS } from "../support/rate-limits.js";
import { sink } from "../support/sink.js";

const TOKENS = {
  aFull: "test-a-full-0123456789",
  aRead: "test-a-read-0123456789",
  bFull: "test-b-full-0123456789",
};
const SEED = JSON.stringify([
  { token: TOKENS.aFull, project: "alpha", scope: "full" },
  { token: TOKENS.aRead, project: "alpha", scope: "read" },
  { token: TOKENS.bFull, project: "beta", scope: "full" },
]);


const LONG_TEXT = Array.from({ length: 14 }, (_, i) =>
  `Paragraph ${i + 1} explains how the city council reviewed the budget for public libraries, parks and schools. ` +
  `Members asked detailed questions about maintenance costs and the schedule for the coming years.`,
).join("\n\n");

describe("REST API end to end (embedded default)", function () {
  // Renders run below the service's priority: beside busy programs an article takes minutes.
  this.timeout(900_000);
  let dataDir: string;
  let sys: Embedded;
  let A: ReturnType<typeof api>;
  let AR: ReturnType<typeof api>;
  let B: ReturnType<typeof api>;
  let anon: ReturnType<typeof api>;

  // AUDIO_ENGINE=wasm checks the engine a fresh machine without espeak-ng/lame uses.
  const env = () => ({ PORT: "0", HOST: "127.0.0.1", DATA_DIR: dataDir, SEED_TOKENS: SEED, MAX_BODY_BYTES: String(64 * 1024), AUDIO_ENGINE: process.env.AUDIO_ENGINE, ...ROOMY_RATE_LIMITS });

  async function start(extra: Record<string, string> = {}) {
    sys = await startEmbedded({ ...env(), ...extra }, sink());
    A = api(sys.url, TOKENS.aFull);
    AR = api(sys.url, TOKENS.aRead);
    B = api(sys.url, TOKENS.bFull);
    anon = api(sys.url);
  }

  async function ready(call: ReturnType<typeof api>, id: string, timeoutMs = 600_000) {
    return waitFor(`article ${id} ready`, async () => {
      const r = await call("GET", `/api/articles/${id}`);
      if (r.body?.article?.status === "errored") throw new Error(`errored: ${r.body.article.error}`);
      return r.body?.article?.status === "ready" ? r.body.article : undefined;
    }, timeoutMs, 200);
  }

  before(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), "e2e-embedded-"));
    await start();
  });

  after(async () => {
    await sys?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it("creates an article that becomes ready with playable full and preview MP3", async () => {
    const created = await A("POST", "/api/articles", {
      title: "Council approves library budget",
      text: LONG_TEXT,
      url: "https://news.example.com/2026/11/library-budget?ref=home",
      externalId: "ext-library-1",
      labels: ["local", "politics"],
    });
    expect(created.status).to.equal(200);
    expect(created.body).to.have.keys("result", "id");
    expect(created.body.result).to.equal("ok");
    const id = created.body.id;

    const first = await A("GET", `/api/articles/${id}`);
    expect(["waiting", "processing", "ready"]).to.include(first.body.article.status);
    expect(first.body.article).not.to.have.property("audio");

    const art = await ready(A, id);
    expect(art.id).to.equal(id);
    expect(art.externalId).to.equal("ext-library-1");
    expect(art.voice).to.equal("alloy");
    expect(art.lang).to.equal("en-US");
    expect(art.labels).to.deep.equal(["local", "politics"]);
    expect(art.updated).to.be.a("number");
    expect(art).not.to.have.property("error");
    // Without PUBLIC_BASE_URL, audio URLs are on the origin the request used (docs/running.md).
    expect(art.audio).to.match(new RegExp(`^${sys.url.replace(/[.:/]/g, "\\$&")}/audio/`));

    const full = await fetch(art.audio.replace("localhost", "127.0.0.1"));
    expect(full.status).to.equal(200);
    expect(full.headers.get("content-type")).to.equal("audio/mpeg");
    const fullBuf = Buffer.from(await full.arrayBuffer());
    const preview = Buffer.from(await (await fetch(art.audio_preview.replace("localhost", "127.0.0.1"))).arrayBuffer());

    // Valid frames, and the reported durations are the frames' durations.
    expect(parseFrames(fullBuf).length).to.be.greaterThan(100);
    expect(art.audio_duration).to.be.closeTo(mp3Duration(fullBuf), 0.05);
    expect(art.audio_preview_duration).to.be.closeTo(mp3Duration(preview), 0.05);
    // An independent decoder agrees on the duration.
    const { parseBuffer } = await import("music-metadata");
    const meta = await parseBuffer(fullBuf, { mimeType: "audio/mpeg" }, { duration: true });
    expect(meta.format.duration).to.be.closeTo(art.audio_duration, 0.1);
    // A long article gets a preview of about 30 s, ending at a sentence, shorter than the full audio.
    expect(art.audio_duration).to.be.greaterThan(60);
    expect(art.audio_preview_duration).to.be.lessThan(art.audio_duration);
    expect(art.audio_preview_duration).to.be.within(25, 40);
    // The stored file says what it is (ID3v2.4).
    expect(meta.common.title).to.equal("Council approves library budget");
    expect(meta.common.language).to.equal("eng");
    expect(Date.parse(meta.common.date ?? "")).to.be.closeTo(Date.now(), 2 * 86_400_000);
  });

  it("serves audio with byte ranges, ETag and long cache headers", async () => {
    const { body } = await A("GET", "/api/articles_external_id/ext-library-1");
    const url = body.article.audio.replace("localhost", "127.0.0.1");
    const whole = await fetch(url);
    const etag = whole.headers.get("etag");
    expect(whole.headers.get("cache-control")).to.match(/max-age=\d{3,}/);
    expect(whole.headers.get("accept-ranges")).to.equal("bytes");
    const size = Number(whole.headers.get("content-length"));
    const part = await fetch(url, { headers: { range: "bytes=100-199" } });
    expect(part.status).to.equal(206);
    expect(part.headers.get("content-range")).to.equal(`bytes 100-199/${size}`);
    expect((await part.arrayBuffer()).byteLength).to.equal(100);
    const again = await fetch(url, { headers: { "if-none-match": etag! } });
    expect(again.status).to.equal(304);
    expect((await fetch(url, { headers: { range: `bytes=${size + 10}-` } })).status).to.equal(416);
  });

  it("finds an article by id, external id and URL-encoded original URL, with the spec's field names", async () => {
    const byExt = await AR("GET", "/api/articles_external_id/ext-library-1");
    expect(byExt.status).to.equal(200);
    const url = "https://news.example.com/2026/11/library-budget?ref=home";
    const byUrl = await AR("GET", `/api/articles_external_url/${encodeURIComponent(url)}`);
    expect(byUrl.status).to.equal(200);
    expect(byUrl.body.article.id).to.equal(byExt.body.article.id);
    expect(byUrl.body.article.url).to.equal(url);
    expect(byUrl.body.article).to.include.keys("externalId", "isRaw", "audio_preview_duration");

    const list = await AR("GET", "/api/articles");
    const item = list.body.articles.find((a: { id: string }) => a.id === byExt.body.article.id);
    expect(item).to.include({ external_id: "ext-library-1" });
    expect(item).not.to.have.property("externalId");
    // The spec's list item carries the article's text, as stored (the embedded store keeps it deflated).
    expect(item.text).to.equal(byExt.body.article.text);
    expect(item.text.length).to.be.greaterThan(1000);
    // Not in the spec's list item, added on purpose so a filtered list shows why each row matched.
    expect(item.labels).to.deep.equal(byExt.body.article.labels);
    expect(item.labels).to.deep.equal(["local", "politics"]);
  });

  it("updates an article, re-generates its audio and replaces labels", async () => {
    const created = await A("POST", "/api/articles", {
      title: "Weather",
      text: "Sunny today.",
      voice: "nova",
      lang: "en-US",
      labels: ["a", "b"],
      prompt: "Read calmly",
    });
    const id = created.body.id;
    const v1 = await ready(A, id);
    const up = await A("PUT", `/api/articles/${id}`, { title: "Weather update", text: "Rain is expected this afternoon.", labels: ["c"], prompt: null });
    expect(up.status).to.equal(200);
    expect(up.body).to.deep.equal({ result: "ok", id });
    const v2 = await ready(A, id);
    expect(v2.title).to.equal("Weather update");
    expect(v2.labels).to.deep.equal(["c"]);
    expect(v2.prompt).to.equal(null);
    expect(v2.voice).to.equal("nova");
    expect(v2.audio).not.to.equal(v1.audio);

    // Update by external id, and move to a new external id.
    await A("PUT", `/api/articles/${id}`, { title: "W", text: "T", externalId: "weather-1" });
    const byExt = await A("PUT", "/api/articles_external_id/weather-1", { title: "W2", text: "T2", externalId: "weather-2" });
    expect(byExt.body).to.deep.equal({ result: "ok", id });
    expect((await A("GET", "/api/articles_external_id/weather-2")).body.article.title).to.equal("W2");
    expect((await A("GET", "/api/articles_external_id/weather-1")).status).to.equal(404);
  });

  it("rejects bad input with a 4xx ErrorResult and changes nothing", async () => {
    const before = (await A("GET", "/api/articles?limit=100")).body.count;
    const cases: Array<[string, string, unknown, number]> = [
      ["POST", "/api/articles", { text: "no title" }, 400],
      ["POST", "/api/articles", { title: "t", text: "x", voice: "nova" }, 400],
      ["POST", "/api/articles", { title: "t", text: "x", voice: "de-DE-KatjaNeural", lang: "en-US" }, 400],
      ["POST", "/api/articles", { title: "t", text: "x", voice: "robot", lang: "en-US" }, 400],
      ["POST", "/api/articles", { title: "t", text: "x", url: "ftp://example.com/a" }, 400],
      ["POST", "/api/articles", { title: "t", text: "x", labels: "not-a-list" }, 400],
      ["POST", "/api/articles", { title: "t", text: "x", externalId: "ext-library-1" }, 400],
      ["POST", "/api/articles", "{not json", 400],
      ["POST", "/api/articles", { title: "t", text: "x".repeat(70 * 1024) }, 413],
      ["GET", "/api/articles?limit=9", undefined, 400],
      ["GET", "/api/articles?limit=101", undefined, 400],
      ["GET", "/api/articles?offset=-1", undefined, 400],
      ["GET", "/api/articles?limit=abc", undefined, 400],
      ["GET", "/api/articles/does-not-exist", undefined, 404],
      ["PUT", "/api/articles/does-not-exist", { title: "t", text: "x" }, 404],
      ["DELETE", "/api/articles/does-not-exist", undefined, 404],
      ["GET", "/api/no-such-route", undefined, 404],
    ];
    for (const [method, p, body, status] of cases) {
      const r = await A(method, p, body);
      expect(r.status, `${method} ${p} ${JSON.stringify(body)?.slice(0, 80)}`).to.equal(status);
      expect(r.body?.result, r.text).to.equal("fail");
      expect(r.body.message).to.be.a("string").and.not.empty;
    }
    expect((await A("GET", "/api/articles?limit=100")).body.count).to.equal(before);
  });

  it("answers 401 for missing, malformed and unknown tokens and 403 for read-only writes", async () => {
    expect((await anon("GET", "/api/articles")).status).to.equal(401);
    expect((await anon("GET", "/api/articles", undefined, { authorization: TOKENS.aFull })).status).to.equal(401);
    expect((await anon("GET", "/api/articles", undefined, { authorization: "Bearer nope-nope-nope" })).status).to.equal(401);
    const r = await AR("POST", "/api/articles", { title: "t", text: "x" });
    expect(r.status).to.equal(403);
    expect(r.body.result).to.equal("fail");
    const { body } = await AR("GET", "/api/articles_external_id/ext-library-1");
    expect((await AR("PUT", `/api/articles/${body.article.id}`, { title: "t", text: "x" })).status).to.equal(403);
    expect((await AR("DELETE", `/api/articles/${body.article.id}`)).status).to.equal(403);
    // GET /api needs no token and redirects to the docs the gateway serves itself.
    const doc = await anon("GET", "/api");
    expect(doc.status).to.be.oneOf([301, 302, 307, 308]);
    const page = await fetch(new URL(doc.headers.get("location")!, sys.url));
    expect(page.status).to.equal(200);
    expect(await page.text()).to.match(/<html/i);
    const spec = await anon("GET", "/api/openapi.json");
    expect(spec.body.openapi).to.match(/^3\.1/);
    expect(spec.body.info.version).to.equal("1.0.0");
  });

  it("keeps projects apart", async () => {
    const { body } = await A("GET", "/api/articles_external_id/ext-library-1");
    const id = body.article.id;
    expect((await B("GET", `/api/articles/${id}`)).status).to.equal(404);
    expect((await B("GET", "/api/articles_external_id/ext-library-1")).status).to.equal(404);
    expect((await B("GET", `/api/articles_external_url/${encodeURIComponent(body.article.url)}`)).status).to.equal(404);
    expect((await B("PUT", `/api/articles/${id}`, { title: "hijack", text: "x" })).status).to.equal(404);
    expect((await B("DELETE", `/api/articles/${id}`)).status).to.equal(404);
    const list = await B("GET", "/api/articles");
    expect(list.body.articles.map((a: { id: string }) => a.id)).not.to.include(id);
    // externalId is unique across all projects.
    expect((await B("POST", "/api/articles", { title: "t", text: "x", externalId: "ext-library-1" })).status).to.equal(400);
    expect((await A("GET", `/api/articles/${id}`)).body.article.title).to.equal("Council approves library budget");
  });

  it("lets exactly one of twelve racing creates take an externalId", async () => {
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) => (i % 2 ? A : B)("POST", "/api/articles", { title: `race ${i}`, text: "x", externalId: "race-ext" })),
    );
    expect(results.filter((r) => r.status === 200)).to.have.length(1);
    expect(results.filter((r) => r.status === 400)).to.have.length(11);
  });

  it("pages newest first with the total count", async () => {
    const P = api(sys.url, TOKENS.bFull);
    const existing = (await P("GET", "/api/articles")).body.count;
    for (let i = 0; i < 23; i++) {
      const r = await P("POST", "/api/articles", { title: `page item ${i}`, text: "short", isRaw: true });
      expect(r.status).to.equal(200);
    }
    const total = existing + 23;
    const p1 = await P("GET", "/api/articles");
    expect(p1.body.count).to.equal(total);
    expect(p1.body.articles).to.have.length(10);
    const all = (await P("GET", "/api/articles?limit=100")).body.articles;
    expect(all).to.have.length(total);
    const added = all.map((a: { added: number }) => a.added);
    expect(added).to.deep.equal([...added].sort((x, y) => y - x));
    const p3 = await P("GET", "/api/articles?limit=10&offset=20");
    expect(p3.body.articles.map((a: { id: string }) => a.id)).to.deep.equal(all.slice(20, 30).map((a: { id: string }) => a.id));
    expect((await P("GET", `/api/articles?offset=${total}`)).body.articles).to.have.length(0);
  });

  it("deletes: still readable with status deleted, unlisted, not updatable, deleting again is ok", async () => {
    const { body } = await A("POST", "/api/articles", { title: "To delete", text: "Bye.", externalId: "del-1" });
    const id = body.id;
    const del = await A("DELETE", `/api/articles/${id}`);
    expect(del.status).to.equal(200);
    expect(del.body).to.deep.equal({ result: "ok" });
    const got = await A("GET", `/api/articles/${id}`);
    expect(got.body.article.status).to.equal("deleted");
    expect((await A("GET", "/api/articles?limit=100")).body.articles.map((a: { id: string }) => a.id)).not.to.include(id);
    expect((await A("PUT", `/api/articles/${id}`, { title: "back", text: "x" })).status).to.equal(400);
    expect((await A("DELETE", `/api/articles/${id}`)).status).to.equal(200);
    expect((await A("POST", "/api/articles", { title: "t", text: "x", externalId: "del-1" })).status).to.equal(400);
    // No late audio result brings it back.
    await new Promise((r) => setTimeout(r, 1500));
    expect((await A("GET", `/api/articles/${id}`)).body.article.status).to.equal("deleted");
  });

  it("survives a burst of mixed valid and invalid requests without any 5xx", async () => {
    const reqs = Array.from({ length: 300 }, (_, i) => {
      switch (i % 6) {
        case 0: return A("POST", "/api/articles", { title: `burst ${i}`, text: "Burst body.", isRaw: true });
        case 1: return A("POST", "/api/articles", "{]");
        case 2: return A("GET", "/api/articles?limit=5");
        case 3: return anon("GET", "/api/articles");
        case 4: return A("GET", `/api/articles/${"x".repeat(i)}`);
        default: return AR("GET", "/api/articles?limit=10");
      }
    });
    const results = await Promise.all(reqs);
    const fivexx = results.filter((r) => r.status >= 500);
    expect(fivexx.map((r) => r.text)).to.deep.equal([]);
    expect((await anon("GET", "/healthz")).status).to.equal(200);
  });

  it("keeps articles, tokens and audio across a restart, and works the same with services calling over HTTP/2", async () => {
    const rpcUrls = () => sys.services.filter((s) => s.name !== "gateway").map((s) => s.url);
    expect(rpcUrls().map((u) => inProcessEndpoint(u) !== undefined), "in-process calls by default").to.deep.equal([true, true, true]);
    const before = await A("GET", "/api/articles_external_id/ext-library-1");
    await sys.close();
    // The restarted system sends its internal calls over the loopback sockets instead.
    await start({ RPC_IN_PROCESS: "false" });
    expect(rpcUrls().map((u) => inProcessEndpoint(u) !== undefined)).to.deep.equal([false, false, false]);
    const after = await A("GET", "/api/articles_external_id/ext-library-1");
    expect(after.status).to.equal(200);
    // Only the port differs: each start picks a free one.
    const withoutHost = (a: Record<string, unknown>) => JSON.parse(JSON.stringify(a).replace(/(localhost|127\.0\.0\.1):\d+/g, "HOST"));
    expect(withoutHost(after.body.article)).to.deep.equal(withoutHost(before.body.article));
    const audio = await fetch(after.body.article.audio.replace(/localhost:\d+/, new URL(sys.url).host));
    expect(audio.status).to.equal(200);
    expect((await AR("GET", "/api/articles")).status).to.equal(200);
    const created = await A("POST", "/api/articles", { title: "Over the wire", text: "Every internal call of this one crosses a socket." });
    expect(created.status).to.equal(200);
    expect((await ready(A, created.body.id)).audio).to.match(/\.mp3$/);
    expect((await B("GET", `/api/articles/${created.body.id}`)).status).to.equal(404);
  });
});
