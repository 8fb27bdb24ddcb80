// Issue 36, point 1: GET /api/articles?q= end to end, written once and run on the embedded
// default (search.test.ts) and the full stack (search-stack.test.ts), through the public REST
// API only: words as an editor types them, the filters beside them, paging, another project's
// articles never, deleted ones never, and a bad query refused with a clear 400.
import { expect } from "chai";
import { api, waitFor } from "../support/http.js";

export interface SearchTarget {
  url: string;
  /** Full token of project A. */
  a: string;
  /** Read token of project A. */
  aRead: string;
  /** Full token of project B. */
  b: string;
}

export function searchScenarios(target: () => SearchTarget): void {
  it("finds by words of title and text (prefixes, any order, diacritics folded), ranked, filtered, paged, scoped", async () => {
    const t = target();
    const a = api(t.url, t.a);
    const read = api(t.url, t.aRead);
    const create = async (title: string, text: string, labels: string[] = []) => {
      const r = await a("POST", "/api/articles", { title, text, labels });
      expect(r.status, r.text).to.equal(200);
      return r.body.id as string;
    };
    const tag = `s${Date.now().toString(36)}`;
    const inText = await create(`Autumn reading ${tag}`, "New novels and the Bücher of the season.", ["books"]);
    const inTitle = await create(`Bücher im Herbst ${tag}`, "A list for the season.");
    const other = await create(`Bücher elsewhere ${tag}`, "x");
    const gone = await create(`Bücher gone ${tag}`, "x");
    expect((await a("DELETE", `/api/articles/${gone}`)).status).to.equal(200);
    expect((await api(t.url, t.b)("POST", "/api/articles", { title: `Bücher of B ${tag}`, text: "x" })).status).to.equal(200);

    const q = (query: string, extra = "") => read("GET", `/api/articles?q=${encodeURIComponent(query)}${extra}`);
    const found = await q(`bucher ${tag}`);
    expect(found.status, found.text).to.equal(200);
    expect(found.body.result).to.equal("ok");
    expect(found.body.count).to.equal(3);
    const ids = found.body.articles.map((x: { id: string }) => x.id);
    // Title matches first (created in the same second: their order is the list's tie-break), the text match last.
    expect(ids.slice(0, 2)).to.have.members([other, inTitle]);
    expect(ids[2]).to.equal(inText);
    expect(found.body.articles[0]).to.include.keys("id", "external_id", "title", "text", "status", "labels");
    expect((await q(`${tag} SEASON büch`)).body.count).to.equal(2);
    expect((await q(`${tag} bucher`, "&label=books")).body.articles.map((x: { id: string }) => x.id)).to.deep.equal([inText]);
    expect((await q(`${tag} gone`)).body).to.deep.equal({ result: "ok", count: 0, articles: [] });
    const page2 = await q(`bucher ${tag}`, "&limit=10&offset=2");
    expect(page2.body.count).to.equal(3);
    expect(page2.body.articles.map((x: { id: string }) => x.id)).to.deep.equal([inText]);
    // The same page again and the same query spelled otherwise: the same matches (an article's
    // status may move on between the two reads while its audio is made).
    const again = (await q(`${tag}   BUCHER`, "&offset=2")).body;
    expect({ count: again.count, ids: again.articles.map((x: { id: string }) => x.id) }).to.deep.equal({ count: page2.body.count, ids: [inText] });

    // Ready ones only: none until the audio is there, then the same count as the list's.
    await waitFor("audio", async () => ((await read("GET", `/api/articles/${inTitle}`)).body.article?.status === "ready" ? true : undefined), 90_000, 200);
    const ready = await q(`herbst ${tag}`, "&status=ready");
    expect(ready.body.count).to.equal(1);
    expect(ready.body.articles[0].id).to.equal(inTitle);
  });

  it("refuses a query it cannot search with a 400 naming q, and an empty one", async () => {
    const read = api(target().url, target().aRead);
    for (const [query, message] of [
      ["%20!!%20", "q must contain at least one word"],
      ["", "q: must not be empty"],
      [encodeURIComponent("x".repeat(201)), "q: must be at most 200 characters"],
      [encodeURIComponent("a b c d e f g h i"), "q may hold at most 8 words"],
    ] as const) {
      const r = await read("GET", `/api/articles?q=${query}`);
      expect(r.status, query).to.equal(400);
      expect(r.body.result).to.equal("fail");
      expect(r.body.message, query).to.contain(message);
    }
    const twice = await read("GET", "/api/articles?q=a&q=b");
    expect(twice.status).to.equal(400);
  });
}
