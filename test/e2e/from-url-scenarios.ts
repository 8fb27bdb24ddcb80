// Create from a URL end to end (issue 35, point 1), written once and run on
// the embedded default and the full stack: pages come from a loopback server
// the suite starts, which the system reaches only because FETCH_ALLOW_PRIVATE
// lists it (with its port); articles go in through the REST API and the
// NDJSON import, as a publisher sends them.
import { expect } from "chai";
import { api, waitFor } from "../support/http.js";
import { articlePageHtml, newsParagraphs, type PageServer } from "../support/article-pages.js";
import { ndjson, postImport } from "../support/import.js";
import { operator, type StatusTarget } from "./statuses-scenarios.js";

export interface FromUrlTarget extends StatusTarget {
  /** The publisher's site, started before the system (whose FETCH_ALLOW_PRIVATE names its port). */
  site: PageServer;
}

type Api = ReturnType<typeof api>;

export function fromUrlScenarios(target: () => FromUrlTarget): void {
  const { cliJson } = operator(target);
  let n = 0;

  async function project(prefix: string, ...settings: string[]) {
    const id = `${prefix}-${Date.now().toString(36)}-${n++}`;
    await cliJson("projects:create", id);
    const { token } = await cliJson("tokens:issue", id, "full");
    if (settings.length) await cliJson("settings:set", id, ...settings);
    return { id, token, A: api(target().url, token) };
  }
  const article = async (A: Api, id: string) => (await A("GET", `/api/articles/${id}`)).body.article;
  const statusOf = (A: Api, id: string, status: string, ms = 120_000) =>
    waitFor(`${id} ${status}`, async () => {
      const a = await article(A, id);
      if (a.status === status) return a;
      if (a.status === "errored" && status !== "errored") throw new Error(`errored: ${a.error}`);
      return undefined;
    }, ms, 100);
  const path = (name: string) => `/${name}-${n++}.html`;

  it("a German page becomes an article through recrawling and parsed, with the page's title, text, language and canonical URL, then ready on request", async () => {
    const { A } = await project("fromurl-de", "audio=onDemand", "creditChars=1000000");
    const site = target().site;
    const at = path("hafen");
    const paragraphs = newsParagraphs(700, "de");
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const canonical = `${site.url}/lokales/hafen-wieder-offen`;
    site.pages.set(at, async () => {
      await held;
      return { status: 200, body: articlePageHtml({ title: "Hafen wieder offen", paragraphs, lang: "de", jsonLdDate: "2026-11-03T08:15:00+01:00", canonical }) };
    });

    const created = await A("POST", "/api/articles", { url: `${site.url}${at}`, fetch: true, labels: ["lokales"] });
    expect(created.status, created.text).to.equal(200);
    expect(created.body).to.have.keys("result", "id");
    const id = created.body.id as string;
    // Answered before the page was: the article shows its content being fetched.
    const fetching = await article(A, id);
    expect(fetching.status).to.equal("recrawling");
    expect(fetching.url).to.equal(`${site.url}${at}`);
    release();

    // Audio on demand: it stays parsed, read from its page, until its audio is asked for.
    const parsed = await statusOf(A, id, "parsed");
    expect(parsed.title).to.equal("Hafen wieder offen");
    expect(parsed.text).to.include(paragraphs[0]);
    expect(parsed.text).not.to.include("Advertisement");
    expect(parsed.text).not.to.include("Home");
    expect(parsed.lang).to.equal("de-DE");
    // JSON-LD's datePublished, in UTC.
    expect(parsed.published).to.equal("2026-11-03T07:15:00.000Z");
    expect(parsed.voice).to.be.a("string");
    expect(parsed.url).to.equal(canonical);
    expect(parsed.labels).to.deep.equal(["lokales"]);
    // Found by its canonical URL, as the player on that page will look it up.
    expect((await A("GET", `/api/articles_external_url/${encodeURIComponent(canonical)}`)).body.article.id).to.equal(id);

    expect((await A("POST", `/api/articles/${id}/audio`)).status).to.equal(200);
    const ready = await statusOf(A, id, "ready");
    expect(ready.audio).to.be.a("string");
    expect(ready.title).to.equal("Hafen wieder offen");
  });

  it("an English page goes on to ready by itself; a title and voice sent with the URL are kept, og:locale and og:url are read", async () => {
    const { A } = await project("fromurl-en");
    const site = target().site;
    const at = path("harbour");
    site.pages.set(at, { status: 200, body: articlePageHtml({ title: "Harbour reopens", paragraphs: newsParagraphs(500), ogLocale: "en_GB", ogUrl: `${site.url}/news/harbour` }) });
    const auto = (await A("POST", "/api/articles", { url: `${site.url}${at}`, fetch: true })).body.id as string;
    const kept = (await A("POST", "/api/articles", { url: `${site.url}${at}`, fetch: true, title: "Our own headline", voice: "nova", lang: "de-DE", externalId: `kept-${n++}` })).body.id as string;

    // A page that names no language: its text's language is detected, as for any create without one.
    const unnamed = path("ohne-sprache");
    site.pages.set(unnamed, { status: 200, body: articlePageHtml({ title: "Fähren fahren wieder", paragraphs: newsParagraphs(500, "de"), metaDate: "2026-10-30T06:00:00Z" }) });
    const detected = (await A("POST", "/api/articles", { url: `${site.url}${unnamed}`, fetch: true })).body.id as string;
    // A date sent with the URL wins over the page's.
    const dated = (await A("POST", "/api/articles", { url: `${site.url}${unnamed}`, fetch: true, published: "2026-01-02T03:04:05Z" })).body.id as string;

    const a = await statusOf(A, auto, "ready");
    expect(a).to.include({ title: "Harbour reopens", lang: "en-US", url: `${site.url}/news/harbour` });
    expect(a.published ?? null).to.equal(null);
    const d = await statusOf(A, detected, "ready");
    expect(d).to.include({ title: "Fähren fahren wieder", lang: "de-DE", published: "2026-10-30T06:00:00.000Z" });
    expect((await statusOf(A, dated, "ready")).published).to.equal("2026-01-02T03:04:05.000Z");
    // Lists order by the page's date: the article dated by its page lists before the one dated in January.
    const listed = (await A("GET", "/api/articles?limit=10")).body.articles.map((x: { id: string }) => x.id);
    expect(listed.indexOf(detected)).to.be.below(listed.indexOf(dated));
    expect(a.text).to.include("The harbour reopened on Monday");
    const k = await statusOf(A, kept, "ready");
    expect(k).to.include({ title: "Our own headline", voice: "nova", lang: "de-DE" });
    expect(k.text).to.include("The harbour reopened on Monday");
  });

  it("a page that answers 404 and a page without an article end errored, saying why in words", async () => {
    const { A } = await project("fromurl-bad");
    const site = target().site;
    const empty = path("empty");
    site.pages.set(empty, { status: 200, body: `<!doctype html><html><head><title>Login</title></head><body><nav><a href="/">Home</a></nav><form><input name="q"><button>Search</button></form></body></html>` });
    const missing = (await A("POST", "/api/articles", { url: `${site.url}/no-such-page.html`, fetch: true })).body.id as string;
    const hollow = (await A("POST", "/api/articles", { url: `${site.url}${empty}`, fetch: true })).body.id as string;

    const m = await statusOf(A, missing, "errored");
    expect(m.error).to.equal("the page answered 404 Not Found");
    expect(m.errors).to.have.length(1);
    expect(m.errors[0].error).to.equal(m.error);
    const h = await statusOf(A, hollow, "errored");
    expect(h.error).to.equal("no article text found on the page");
  });

  it("a private address that is not allow-listed is refused, and nothing is fetched from it", async () => {
    const { A } = await project("fromurl-ssrf");
    // 127.0.0.1 is allowed on the site's port only.
    const id = (await A("POST", "/api/articles", { url: "http://127.0.0.1:9/admin", fetch: true })).body.id as string;
    const a = await statusOf(A, id, "errored");
    expect(a.error).to.match(/^the page's address is not allowed: 127\.0\.0\.1 resolves to a loopback address/);
  });

  it("bad requests are refused with a clear 400 and create nothing", async () => {
    const { A } = await project("fromurl-400");
    const site = target().site;
    const cases: Array<[unknown, RegExp]> = [
      [{ url: `${site.url}/x.html`, fetch: true, text: "Some text" }, /text: must be absent when fetch is true/],
      [{ fetch: true, title: "No URL" }, /url: is required/],
      [{ url: "ftp://example.com/a", fetch: true }, /url: must be an absolute http\(s\) URL/],
      [{ url: `${site.url}/x.html` }, /title: is required; text: is required|text: is required/],
      [{ url: `${site.url}/x.html`, fetch: true, parse: true }, /parse: does not go with fetch/],
    ];
    for (const [body, message] of cases) {
      const res = await A("POST", "/api/articles", body);
      expect(res.status, JSON.stringify(body)).to.equal(400);
      expect(res.body.result).to.equal("fail");
      expect(res.body.message).to.match(message);
    }
    expect((await A("GET", "/api/articles")).body.count).to.equal(0);
  });

  it("the NDJSON import takes {url} lines without text: each page is fetched, bad pages end errored", async () => {
    const { A, token } = await project("fromurl-import");
    const site = target().site;
    const good = path("import-good");
    site.pages.set(good, { status: 200, body: articlePageHtml({ title: "Imported from its page", paragraphs: newsParagraphs(400), lang: "en" }) });
    const answer = await postImport(target().url, token, ndjson([{ url: `${site.url}${good}`, externalId: `imp-${n++}` }, { url: `${site.url}/gone.html` }, { title: "Plain", text: "A plain article with its own text." }, { url: "not a url" }]));
    expect(answer.status, answer.text).to.equal(200);
    const [l1, l2, l3, l4] = answer.lines;
    expect(l1).to.include({ line: 1, result: "ok" });
    expect(l2).to.include({ line: 2, result: "ok" });
    expect(l3).to.include({ line: 3, result: "ok" });
    expect(l4).to.include({ line: 4, result: "fail", status: 400 });
    const a = await statusOf(A, l1.id, "ready");
    expect(a.title).to.equal("Imported from its page");
    expect(a.text).to.include("The harbour reopened on Monday");
    expect((await statusOf(A, l2.id, "errored")).error).to.equal("the page answered 404 Not Found");
    expect((await statusOf(A, l3.id, "ready")).title).to.equal("Plain");
  });
}
