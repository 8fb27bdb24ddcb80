// Sources end to end (issue 35, points 2 and 5), written once and run on the
// embedded default and the full stack: a project follows feeds served by a
// local site (test/sources/feed-server.ts), polled through the public API.
import { expect } from "chai";
import { api, waitFor } from "../support/http.js";
import type { FeedServer } from "../sources/feed-server.js";
import { atomFeed, jsonFeed, rssFeed, sitemap, sitemapIndex, type TestItem } from "../sources/feeds.js";
import { operator, type StatusTarget } from "./statuses-scenarios.js";

export interface SourcesTarget extends StatusTarget {
  site: FeedServer;
  /** SOURCE_ITEMS_PER_POLL the system runs with. */
  itemsPerPoll: number;
}

type Api = ReturnType<typeof api>;

const OLD = "2020-03-01T10:00:00Z";
export const story = (n: string, words = "The harbour reopened after two years of works.") =>
  `<p>${words} Story ${n} tells how the quay was rebuilt stone by stone.</p><p>Fishing boats are back and the market opens on Saturdays again.</p>`;
export const page = (title: string, body: string) =>
  `<!doctype html><html lang="en"><head><title>${title}</title></head><body><nav><a href="/">Home</a></nav><article><h1>${title}</h1>${body}</article><footer>Imprint</footer></body></html>`;

export function sourcesScenarios(target: () => SourcesTarget): void {
  const { cliJson } = operator(target);
  let n = 0;

  async function project(prefix: string, ...settings: string[]) {
    const id = `${prefix}-${Date.now().toString(36)}-${n++}`;
    await cliJson("projects:create", id);
    const { token } = await cliJson("tokens:issue", id, "full");
    const { token: read } = await cliJson("tokens:issue", id, "read");
    if (settings.length) await cliJson("settings:set", id, ...settings);
    return { id, A: api(target().url, token), R: api(target().url, read) };
  }
  const path = (name: string) => `/${name}-${Date.now().toString(36)}-${n++}`;
  const item = (p: string, id: string, date: string, html = story(id)): TestItem => ({ id: `urn:${p}:${id}`, link: `${target().site.url}${p}/${id}.html`, title: `Story ${id}`, html, date });
  const poll = async (A: Api, id: string) => {
    const r = await A("POST", `/api/sources/${id}/poll`);
    expect(r.status, r.text).to.equal(200);
    return r.body.source;
  };
  const firstPoll = (A: Api, id: string) => waitFor(`first poll of ${id}`, async () => ((await A("GET", `/api/sources/${id}`)).body.source.state.lastPoll ? (await A("GET", `/api/sources/${id}`)).body.source : undefined), 60_000);
  const byExternalId = async (A: Api, externalId: string) => (await A("GET", `/api/articles_external_id/${encodeURIComponent(externalId)}`)).body.article;
  /** An article read from its page gets its text once the page is fetched, in the background. */
  const textOf = (A: Api, externalId: string, sentence: string) =>
    waitFor(`${externalId} read from its page`, async () => {
      const a = await byExternalId(A, externalId);
      return typeof a?.text === "string" && a.text.includes(sentence) ? a : undefined;
    }, 60_000, 100);
  const readyOf = (A: Api, externalId: string) =>
    waitFor(`${externalId} ready`, async () => {
      const a = await byExternalId(A, externalId);
      return a?.status === "ready" ? a : undefined;
    }, 180_000, 200);

  it("a new item becomes an audio article within one poll; items older than the source are not imported", async () => {
    const { A } = await project("src-new");
    const p = path("rss");
    target().site.set(`${p}.xml`, { body: rssFeed([item(p, "old", OLD)]) });
    const created = await A("POST", "/api/sources", { url: `${target().site.url}${p}.xml`, labels: ["feed"] });
    expect(created.status, created.text).to.equal(200);
    expect(created.body).to.have.keys("result", "id");
    const first = await firstPoll(A, created.body.id);
    expect(first.state).to.include({ seen: 1, created: 0, error: null });
    expect(first.kind).to.equal("rss");

    const fresh = item(p, "fresh", new Date().toISOString());
    target().site.set(`${p}.xml`, { body: rssFeed([fresh, item(p, "old", OLD)]) });
    const after = await poll(A, created.body.id);
    expect(after.state).to.include({ seen: 2, created: 1, error: null });
    const a = await readyOf(A, fresh.id);
    expect(a).to.include({ title: "Story fresh", url: fresh.link });
    expect(a.labels).to.deep.equal(["feed"]);
    // Its date in the feed (RSS dates are whole seconds) is the article's publication date.
    expect(Date.parse(a.published)).to.equal(Math.floor(Date.parse(fresh.date!) / 1000) * 1000);
    expect(a.audio).to.be.a("string");
    expect(await byExternalId(A, `urn:${p}:old`)).to.equal(undefined);
  });

  it("a re-poll never duplicates; an edited item re-renders once; an unchanged one does not; a deleted item is left alone; 304s are counted", async () => {
    const { A } = await project("src-edit");
    const p = path("atom");
    target().site.set(`${p}.xml`, { body: atomFeed([]) });
    const { id } = (await A("POST", "/api/sources", { url: `${target().site.url}${p}.xml` })).body;
    await firstPoll(A, id);
    const one = item(p, "one", new Date().toISOString());
    target().site.set(`${p}.xml`, { body: atomFeed([one]) });
    expect((await poll(A, id)).state.created).to.equal(1);
    const first = await readyOf(A, one.id);

    const before304 = target().site.hits(`${p}.xml`).notModified;
    const again = await poll(A, id);
    expect(target().site.hits(`${p}.xml`).notModified).to.equal(before304 + 1);
    expect(again.state).to.include({ created: 1, updated: 0, error: null });
    expect(await byExternalId(A, one.id)).to.include({ status: "ready", audio: first.audio, updated: first.updated });
    expect((await A("GET", "/api/articles")).body.count).to.equal(1);

    // The audio URL names the revision: a re-render gives a new one, once.
    const edited = { ...one, html: story("one", "The harbour reopened after three years of works.") };
    target().site.set(`${p}.xml`, { body: atomFeed([edited]) });
    expect((await poll(A, id)).state).to.include({ created: 1, updated: 1 });
    expect((await byExternalId(A, one.id)).text).to.contain("three years");
    const second = await readyOf(A, one.id);
    expect(second.audio).to.not.equal(first.audio);
    expect((await poll(A, id)).state).to.include({ created: 1, updated: 1 });
    expect(await byExternalId(A, one.id)).to.include({ status: "ready", audio: second.audio });

    target().site.set(`${p}.xml`, { body: atomFeed([]) });
    const gone = await poll(A, id);
    expect(gone.state).to.include({ seen: 0, created: 1, error: null });
    expect((await byExternalId(A, one.id)).status).to.equal("ready");
    expect((await A("GET", "/api/articles")).body.count).to.equal(1);
  });

  it("a feed answering 500, garbage or 503 with Retry-After backs off and shows its error; a good answer clears it", async () => {
    const { A } = await project("src-err");
    const p = path("bad");
    target().site.set(`${p}.json`, { status: 500, body: "oops", type: "text/plain" });
    const { id } = (await A("POST", "/api/sources", { url: `${target().site.url}${p}.json`, pollSeconds: 60 })).body;
    const first = await firstPoll(A, id);
    expect(first.state.error).to.equal("the feed answered HTTP 500");
    const gap = (s: { state: { lastPoll: string; nextPoll: string } }) => (Date.parse(s.state.nextPoll) - Date.parse(s.state.lastPoll)) / 1000;
    expect(gap(first)).to.equal(120);
    const second = await poll(A, id);
    expect(gap(second)).to.equal(240);

    target().site.set(`${p}.json`, { body: "<<<not a feed at all>>>", type: "text/html" });
    const garbage = await poll(A, id);
    expect(garbage.state.error).to.match(/not RSS, Atom, JSON Feed or a sitemap/);
    expect(gap(garbage)).to.equal(480);

    target().site.set(`${p}.json`, { status: 503, body: "later", type: "text/plain", headers: { "retry-after": "7200" } });
    const later = await poll(A, id);
    expect(later.state.error).to.equal("the feed answered HTTP 503");
    expect(gap(later)).to.equal(7200);

    target().site.set(`${p}.json`, { body: jsonFeed([]), type: "application/feed+json" });
    const good = await poll(A, id);
    expect(good.state).to.include({ error: null, seen: 0 });
    expect(good.kind).to.equal("jsonfeed");
    expect(gap(good)).to.equal(60);
  });

  it("mode text takes the feed's full text, else the item's page; mode page always fetches the page; a news sitemap is read through its pages", async () => {
    const { A } = await project("src-modes");
    const now = () => new Date().toISOString();
    const p = path("modes");
    target().site.set(`${p}/full.html`, { body: page("Story full", story("full", "Only the page of the full story says this.")), type: "text/html" });
    target().site.set(`${p}/teaser.html`, { body: page("Story teaser", story("teaser", "Only the page of the teaser says this.")), type: "text/html" });

    target().site.set(`${p}-text.xml`, { body: rssFeed([]) });
    target().site.set(`${p}-page.xml`, { body: rssFeed([]) });
    target().site.set(`${p}-map.xml`, { body: sitemap([], { news: true }) });
    const text = (await A("POST", "/api/sources", { url: `${target().site.url}${p}-text.xml`, mode: "text" })).body.id;
    const pageMode = (await A("POST", "/api/sources", { url: `${target().site.url}${p}-page.xml`, mode: "page" })).body.id;
    const map = (await A("POST", "/api/sources", { url: `${target().site.url}${p}-map.xml`, kind: "sitemap" })).body.id;
    for (const s of [text, pageMode, map]) await firstPoll(A, s);
    const full = item(p, "full", now(), story("full", "The feed itself carries this sentence."));
    const teaser = { ...item(p, "teaser", now()), html: "" };

    // The teaser item has no content:encoded; its description alone is never taken for the text.
    const feed = rssFeed([full, teaser]).replace(/<content:encoded><!\[CDATA\[\]\]><\/content:encoded>/, "");
    target().site.set(`${p}-text.xml`, { body: feed });
    expect((await poll(A, text)).state).to.include({ created: 2, error: null });
    expect((await byExternalId(A, full.id)).text).to.contain("The feed itself carries this sentence.");
    await textOf(A, teaser.id, "Only the page of the teaser says this.");

    const again = { ...full, id: `${full.id}-page` };
    target().site.set(`${p}-page.xml`, { body: rssFeed([again]) });
    expect((await poll(A, pageMode)).state).to.include({ created: 1, error: null });
    const fromPage = await textOf(A, again.id, "Only the page of the full story says this.");
    expect(fromPage.text).not.to.contain("Imprint");

    target().site.set(`${p}-map.xml`, { body: sitemap([{ ...teaser, link: `${target().site.url}${p}/teaser.html` }], { news: true }) });
    expect((await poll(A, map)).state).to.include({ created: 1, error: null });
    const fromMap = await textOf(A, `${target().site.url}${p}/teaser.html`, "Only the page of the teaser says this.");
    expect(fromMap).to.include({ title: "Story teaser" });
  });

  it("backfill: N imports the newest N older items, at most the per-poll bound at a time", async () => {
    const { A } = await project("src-backfill", "audio=onDemand");
    const p = path("backfill");
    const old = Array.from({ length: 30 }, (_, i) => item(p, `b${i}`, new Date(Date.parse(OLD) - i * 3_600_000).toISOString()));
    target().site.set(`${p}.xml`, { body: rssFeed(old) });
    const { id } = (await A("POST", "/api/sources", { url: `${target().site.url}${p}.xml`, backfill: target().itemsPerPoll + 2 })).body;
    const first = await firstPoll(A, id);
    expect(first.state.created).to.equal(target().itemsPerPoll);
    expect(Date.parse(first.state.nextPoll) - Date.parse(first.state.lastPoll)).to.equal(60_000);
    const second = await poll(A, id);
    expect(second.state.created).to.equal(target().itemsPerPoll + 2);
    expect((await poll(A, id)).state.created).to.equal(target().itemsPerPoll + 2);
    expect(await byExternalId(A, old[0].id)).to.not.equal(undefined);
    expect(await byExternalId(A, old[target().itemsPerPoll + 2].id)).to.equal(undefined);
  });

  it("the daily limit applies to a source's articles as to any create", async () => {
    const { A } = await project("src-limit", "dailyLimit=1");
    const p = path("limit");
    target().site.set(`${p}.xml`, { body: rssFeed([]) });
    const { id } = (await A("POST", "/api/sources", { url: `${target().site.url}${p}.xml` })).body;
    await firstPoll(A, id);
    const items = [item(p, "l1", new Date().toISOString()), item(p, "l2", new Date().toISOString())];
    target().site.set(`${p}.xml`, { body: rssFeed(items) });
    expect((await poll(A, id)).state.created).to.equal(2);
    const statuses = await waitFor("one admitted, one held back", async () => {
      const s = (await Promise.all(items.map((i) => byExternalId(A, i.id)))).map((a) => a.status as string).sort();
      return s.includes("limit_reached") ? s : undefined;
    });
    expect(statuses.filter((s) => s === "limit_reached")).to.have.length(1);
  });

  it("a sitemap index leads to its sitemaps: a new page listed in one becomes an article read from its page", async () => {
    const { A } = await project("src-index");
    const p = path("maps");
    const site = target().site;
    site.set(`${p}/news.xml`, { body: sitemap([]) });
    site.set(`${p}/index.xml`, { body: sitemapIndex([{ loc: `${site.url}${p}/news.xml`, lastmod: new Date().toISOString() }]) });
    const { id } = (await A("POST", "/api/sources", { url: `${site.url}${p}/index.xml` })).body;
    expect((await firstPoll(A, id)).state).to.include({ seen: 0, created: 0, error: null });
    const fresh = item(p, "listed", new Date(Date.now() + 1000).toISOString());
    site.set(`${p}/listed.html`, { body: page("Listed in the sitemap", story("listed")), type: "text/html" });
    site.set(`${p}/news.xml`, { body: sitemap([fresh]) });
    // The index changes with its sitemap (its lastmod), as the protocol asks.
    site.set(`${p}/index.xml`, { body: sitemapIndex([{ loc: `${site.url}${p}/news.xml`, lastmod: new Date(Date.now() + 1000).toISOString() }]) });
    expect((await poll(A, id)).state).to.include({ seen: 1, created: 1, error: null });
    const a = await textOf(A, fresh.link, "Story listed tells how the quay was rebuilt");
    expect(a.title).to.equal("Listed in the sitemap");
  });

  it("the feed's language decides the voice of its articles; Atom XHTML content is their text", async () => {
    const { A } = await project("src-lang");
    const p = path("de");
    target().site.set(`${p}.xml`, { body: atomFeed([], { lang: "de", xhtml: true }) });
    const { id } = (await A("POST", "/api/sources", { url: `${target().site.url}${p}.xml` })).body;
    await firstPoll(A, id);
    const german = "<p>Der Hafen wurde nach zwei Jahren Bauzeit <b>wieder</b> ge\u00f6ffnet.</p><p>Die Fischerboote sind zur\u00fcck, und der Markt \u00f6ffnet samstags wieder.</p>";
    const one = item(p, "eins", new Date(Date.now() + 1000).toISOString(), german);
    target().site.set(`${p}.xml`, { body: atomFeed([one], { lang: "de", xhtml: true }) });
    expect((await poll(A, id)).state).to.include({ created: 1, error: null });
    const a = await byExternalId(A, one.id);
    expect(a.lang).to.equal("de-DE");
    // The markup inside the div, whole, as the article's HTML (parsed like any HTML text).
    expect(a.text).to.equal(german);
  });

  it("the REST shape: validation, scopes, pause and resume, get, delete (its articles are kept)", async () => {
    const { A, R } = await project("src-api");
    const p = path("api");
    target().site.set(`${p}.xml`, { body: rssFeed([]) });
    const url = `${target().site.url}${p}.xml`;
    for (const [body, field] of [
      [{ url, pollSeconds: 59 }, "pollSeconds"],
      [{ url, kind: "podcast" }, "kind"],
      [{ url: "ftp://example.com/feed" }, "url"],
      [{ url, mode: "audio" }, "mode"],
      [{ url, voice: "alloy" }, "lang"],
      [{ pollSeconds: 300 }, "url"],
    ] as const) {
      const r = await A("POST", "/api/sources", body);
      expect(r.status, JSON.stringify(body)).to.equal(400);
      expect(r.body.result).to.equal("fail");
      expect(r.body.message).to.contain(field);
    }
    const privateUrl = await A("POST", "/api/sources", { url: "http://10.1.2.3/feed.xml" });
    expect(privateUrl.status).to.equal(400);
    expect(privateUrl.body.message).to.match(/private/);
    expect((await R("POST", "/api/sources", { url })).status).to.equal(403);

    const { id } = (await A("POST", "/api/sources", { url, pollSeconds: 600, labels: ["x"], voice: "alloy", lang: "en-US" })).body;
    await firstPoll(A, id);
    const listed = await R("GET", "/api/sources");
    expect(listed.status).to.equal(200);
    expect(listed.body.result).to.equal("ok");
    const s = listed.body.sources.find((x: { id: string }) => x.id === id);
    expect(s).to.include({ url, kind: "rss", pollSeconds: 600, paused: false, voice: "alloy", lang: "en-US", mode: "text" });
    expect(s.state).to.have.keys("lastPoll", "lastSuccess", "nextPoll", "seen", "created", "updated", "error");

    expect((await R("PUT", `/api/sources/${id}`, { paused: true })).status).to.equal(403);
    const paused = await A("PUT", `/api/sources/${id}`, { paused: true });
    expect(paused.body.source).to.include({ paused: true, pollSeconds: 600 });
    expect(paused.body.source.state.nextPoll).to.equal(null);
    expect((await A("PUT", `/api/sources/${id}`, { pollSeconds: 30 })).status).to.equal(400);
    const resumed = await A("PUT", `/api/sources/${id}`, { paused: false, pollSeconds: 900 });
    expect(resumed.body.source).to.include({ paused: false, pollSeconds: 900 });

    expect((await A("GET", "/api/sources/no-such-source")).status).to.equal(404);
    expect((await A("POST", "/api/sources/no-such-source/poll")).status).to.equal(404);
    expect((await R("DELETE", `/api/sources/${id}`)).status).to.equal(403);
    expect((await A("DELETE", `/api/sources/${id}`)).body).to.deep.equal({ result: "ok" });
    expect((await A("GET", `/api/sources/${id}`)).status).to.equal(404);
    expect((await A("DELETE", `/api/sources/${id}`)).status).to.equal(404);
  });
}
