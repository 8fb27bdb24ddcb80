// Issue 35, points 3 and 4 through the public API, the same checks on the embedded default and on
// the full stack: publication dates and the order of lists and feeds, and the language of an
// article created without one.
import { randomBytes } from "node:crypto";
import { expect } from "chai";
import { api, waitFor } from "../support/http.js";
import { ndjson, postImport } from "../support/import.js";
import { ENGLISH_PARAGRAPHS, GERMAN_PARAGRAPHS } from "../fixtures/news-paragraphs.js";

export interface DatesTarget {
  url: string;
  full: string;
}

const tag = () => randomBytes(4).toString("hex");

const FRENCH =
  "Le conseil municipal a décidé mardi soir de garder la bibliothèque de la rue des Tilleuls ouverte pendant cinq ans encore. Les élus ont rappelé qu'elle n'avait jamais accueilli autant de lecteurs que l'hiver dernier.";

export function datesScenarios(target: () => DatesTarget): void {
  /** Every id of the label's list, page by page (100 a page), newest first. */
  async function listed(label: string, extra = ""): Promise<{ ids: string[]; count: number; items: any[] }> {
    const { url, full } = target();
    const A = api(url, full);
    const items: any[] = [];
    let count = 0;
    for (let offset = 0; ; offset += 100) {
      const r = await A("GET", `/api/articles?limit=100&offset=${offset}&label=${label}${extra}`);
      expect(r.status, r.text).to.equal(200);
      count = r.body.count;
      items.push(...r.body.articles);
      if (r.body.articles.length < 100) return { ids: items.map((a) => a.id), count, items };
    }
  }

  it("an import of 200 lines without dates keeps the file's order: newest first shows its last line first, on every page and filter", async () => {
    const { url, full } = target();
    const label = `order-${tag()}`;
    const lines = Array.from({ length: 200 }, (_, i) => ({ title: `Imported ${i + 1}`, text: `Line ${i + 1} of the archive.`, labels: [label], voice: "alloy", lang: "en-US" }));
    // On demand: stored waiting, nothing rendered (the order is what is looked at).
    const r = await postImport(url, full, ndjson(lines), { query: "audio=onDemand" });
    expect(r.status, r.text).to.equal(200);
    expect(r.lines.at(-1)).to.include({ result: "ok", imported: 200, failed: 0 });
    const byLine = r.lines.slice(0, -1).map((l) => l.id as string);
    const newestFirst = [...byLine].reverse();
    const all = await listed(label);
    expect(all.count).to.equal(200);
    expect(all.items.map((a) => a.title)).to.deep.equal(lines.map((l) => l.title).reverse());
    expect(all.ids).to.deep.equal(newestFirst);
    // The same order with a status filter (all are waiting), and no article carries a date.
    const waiting = await listed(label, "&status=waiting");
    expect(waiting.ids).to.deep.equal(newestFirst);
    expect(all.items.every((a) => a.published === null)).to.equal(true);
  });

  it("lists by publication date, else creation; takes, normalises, changes and removes the date; refuses a malformed one", async () => {
    const { url, full } = target();
    const A = api(url, full);
    const label = `dates-${tag()}`;
    const create = async (title: string, published?: string) => {
      const res = await A("POST", "/api/articles", { title, text: `${title}.`, labels: [label], voice: "alloy", lang: "en-US", ...(published ? { published } : {}) });
      expect(res.status, res.text).to.equal(200);
      return res.body.id as string;
    };
    const archive = await create("From the archive", "2019-03-04T05:06:07+01:00");
    const today = await create("Written today");
    const tomorrow = await create("Embargoed until tomorrow", new Date(Date.now() + 86_400_000).toISOString());
    const lastYear = await create("From last year", new Date(Date.now() - 365 * 86_400_000).toISOString());
    expect((await listed(label)).ids).to.deep.equal([tomorrow, today, lastYear, archive]);

    // Answered in UTC, on the article and on the list item.
    const one = await A("GET", `/api/articles/${archive}`);
    expect(one.body.article.published).to.equal("2019-03-04T04:06:07.000Z");
    expect((await listed(label)).items.find((a) => a.id === archive).published).to.equal("2019-03-04T04:06:07.000Z");
    expect((await A("GET", `/api/articles/${today}`)).body.article.published).to.equal(null);

    // An update moves it; one without the field keeps it; null removes it.
    let put = await A("PUT", `/api/articles/${archive}`, { title: "From the archive", text: "Now dated later.", published: new Date(Date.now() + 2 * 86_400_000).toISOString() });
    expect(put.status, put.text).to.equal(200);
    expect((await listed(label)).ids[0]).to.equal(archive);
    put = await A("PUT", `/api/articles/${archive}`, { title: "From the archive", text: "Same date." });
    expect((await listed(label)).ids[0]).to.equal(archive);
    put = await A("PUT", `/api/articles/${archive}`, { title: "From the archive", text: "Undated.", published: null });
    expect(put.status, put.text).to.equal(200);
    expect((await A("GET", `/api/articles/${archive}`)).body.article.published).to.equal(null);
    // Back to its creation, just before "today" was created: after it, before the one from last year.
    expect((await listed(label)).ids).to.deep.equal([tomorrow, today, archive, lastYear]);

    for (const bad of ["yesterday", "2024-02-30T10:00:00Z", "2024-05-01", "2024-05-01T10:00:00", 20240501]) {
      const res = await A("POST", "/api/articles", { title: "Bad date", text: "x", published: bad });
      expect(res.status, `${String(bad)}: ${res.text}`).to.equal(400);
      expect(res.body.message).to.match(/^published: /);
    }
    // Nothing was created by them.
    expect((await listed(label)).count).to.equal(4);
  });

  it("an import line's date is taken too, and lists the line by it", async () => {
    const { url, full } = target();
    const label = `import-dates-${tag()}`;
    const rows = [
      { title: "Old story", text: "Old.", labels: [label], published: "2001-01-01T00:00:00Z" },
      { title: "Undated story", text: "Now.", labels: [label] },
      { title: "Newer story", text: "New.", labels: [label], published: "2010-01-01T00:00:00Z" },
      { title: "Bad date", text: "x", labels: [label], published: "01/02/2003" },
    ].map((r) => ({ ...r, voice: "alloy", lang: "en-US" }));
    const r = await postImport(url, full, ndjson(rows), { query: "audio=onDemand" });
    expect(r.lines.slice(0, 3).every((l) => l.result === "ok")).to.equal(true);
    expect(r.lines[3]).to.include({ line: 4, result: "fail", status: 400 });
    expect(r.lines[3].message).to.match(/^published: /);
    expect((await listed(label)).ids).to.deep.equal([r.lines[1].id, r.lines[2].id, r.lines[0].id]);
  });

  it("a feed dates each item by its publication date, else its creation", async () => {
    const { url, full } = target();
    const A = api(url, full);
    const label = `feed-${tag()}`;
    const dated = await A("POST", "/api/articles", { title: "Dated episode", text: "Short.", labels: [label], voice: "alloy", lang: "en-US", published: "2020-02-03T04:05:06Z" });
    const undated = await A("POST", "/api/articles", { title: "Undated episode", text: "Short too.", labels: [label], voice: "alloy", lang: "en-US" });
    for (const id of [dated.body.id, undated.body.id]) {
      await waitFor(`${id} ready`, async () => ((await A("GET", `/api/articles/${id}`)).body.article.status === "ready" ? true : undefined), 90_000, 250);
    }
    const added = (await A("GET", `/api/articles/${undated.body.id}`)).body.article.added as number;
    const player = await A("GET", "/api/player");
    const feed = await fetch(`${player.body.feedUrl}?label=${label}`);
    expect(feed.status).to.equal(200);
    const xml = await feed.text();
    const items = [...xml.matchAll(/<item>[\s\S]*?<\/item>/g)].map((m) => m[0]);
    expect(items).to.have.length(2);
    // The undated one (created now) first, then the one published in 2020.
    expect(items[0]).to.contain("Undated episode").and.contain(`<pubDate>${new Date(added * 1000).toUTCString()}</pubDate>`);
    expect(items[1]).to.contain("Dated episode").and.contain("<pubDate>Mon, 03 Feb 2020 04:05:06 GMT</pubDate>");
  });

  it("a create without voice and lang is read in the text's language; lang given wins; a language without a voice is read by the default voice, with a warning", async () => {
    const { url, full } = target();
    const A = api(url, full);
    const label = `lang-${tag()}`;
    const make = async (body: Record<string, unknown>) => {
      const res = await A("POST", "/api/articles", { labels: [label], ...body });
      expect(res.status, res.text).to.equal(200);
      return res.body as { id: string; warning?: string };
    };
    const german = await make({ title: "Breaking News: Stadtrat", text: GERMAN_PARAGRAPHS[0] });
    expect(german.warning).to.equal(undefined);
    expect((await A("GET", `/api/articles/${german.id}`)).body.article).to.include({ lang: "de-DE", voice: "alloy" });
    const english = await make({ title: "Stadtrat: Council keeps the library", text: ENGLISH_PARAGRAPHS[0] });
    expect((await A("GET", `/api/articles/${english.id}`)).body.article).to.include({ lang: "en-US", voice: "alloy" });
    // Given: kept, whatever the text.
    const given = await make({ title: "Stadtrat", text: GERMAN_PARAGRAPHS[1], voice: "nova", lang: "en-US" });
    expect((await A("GET", `/api/articles/${given.id}`)).body.article).to.include({ lang: "en-US", voice: "nova" });
    // French: the default voice, and the answer and the article say why.
    const french = await make({ title: "Bibliothèque", text: FRENCH });
    expect(french.warning).to.match(/French \(fr\).*no voice.*alloy \(en-US\)/);
    const frenchArticle = (await A("GET", `/api/articles/${french.id}`)).body.article;
    expect(frenchArticle).to.include({ lang: "en-US", voice: "alloy", warning: french.warning });
    // The same on import lines.
    const r = await postImport(url, full, ndjson([{ title: "Import", text: GERMAN_PARAGRAPHS[2], labels: [label] }, { title: "Import", text: FRENCH, labels: [label] }]), { query: "audio=onDemand" });
    expect(r.lines[0]).to.deep.equal({ line: 1, result: "ok", id: r.lines[0].id });
    expect(r.lines[1]).to.include({ line: 2, result: "ok" });
    expect(r.lines[1].warning).to.match(/French/);
    expect((await A("GET", `/api/articles/${r.lines[0].id}`)).body.article.lang).to.equal("de-DE");
  });
}
