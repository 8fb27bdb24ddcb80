// Issue 36, point 1: articles found by words of their title and text, on both stores (the
// embedded one through FTS5, MongoDB through its words index), the same answers from each;
// and an upgraded store's existing articles found too, once its background fill is done.
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { expect } from "chai";
import { queryWords } from "../../lib/search-words.js";
import { sqliteDriver } from "../../lib/store/sqlite-binding.js";
import { openSqliteDatabase } from "../../lib/store/sqlite-collection.js";
import { embeddedLayout, mongoLayout, type ArticleDoc } from "../../services/articles/store/layout.js";
import { SEARCH_INDEX } from "../../services/articles/store/search.js";
import { articlesDatabaseFile, openEmbeddedArticleStore, openMongoArticleStore } from "../../services/articles/store/open.js";
import { initialArticle, type ArticleStore, type ListFilter } from "../../services/articles/store/port.js";
import { draft, type StoreFixture } from "./article-store.contract.js";
import { memoryStoreFixture, mongoStoreFixtures, sqliteStoreFixture } from "./article-store-fixtures.js";

const at = (sec: number) => new Date(sec * 1000);

/** `body` given a data directory of its own, removed after it. */
async function inTempDir(prefix: string, body: (dir: string) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(path.join(os.tmpdir(), prefix));
  try {
    await body(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
const words = (q: string) => {
  const parsed = queryWords(q);
  if ("problem" in parsed) throw new Error(parsed.problem);
  return parsed.words;
};

function searchContract(name: string, open: () => Promise<StoreFixture>): void {
  describe(`article search: ${name}`, function () {
    let fx: StoreFixture;
    let store: ArticleStore;
    beforeEach(async () => {
      fx = await open();
      store = fx.store;
    });
    afterEach(async () => fx?.dispose());

    const ids = async (projectId: string, q: string, filter: Omit<ListFilter, "words"> = {}, limit = 100, offset = 0) => {
      const page = await store.list(projectId, limit, offset, { ...filter, words: words(q) });
      return { count: page.count, ids: page.items.map((a) => a.id) };
    };

    it("finds by whole words in any order, the last one also as a word's beginning, folding case and diacritics, in title or text; every word must match", async () => {
      await store.insert(draft("p", { id: "buecher", title: "Neue Bücher im Herbst", text: "Romane und Sachbücher." }), at(1_700_000_000));
      await store.insert(draft("p", { id: "cafe", title: "Weather", text: "Rain over the CAFÉ terrace, books on the tables." }), at(1_700_000_010));
      await store.insert(draft("p", { id: "plain", title: "Nothing here", text: "Only sunshine." }), at(1_700_000_020));
      expect(await ids("p", "bucher")).to.deep.equal({ count: 1, ids: ["buecher"] });
      expect(await ids("p", "BÜCH")).to.deep.equal({ count: 1, ids: ["buecher"] });
      expect(await ids("p", "herbst sachbu")).to.deep.equal({ count: 1, ids: ["buecher"] });
      expect(await ids("p", "terrace cafe")).to.deep.equal({ count: 1, ids: ["cafe"] });
      expect(await ids("p", "weather books")).to.deep.equal({ count: 1, ids: ["cafe"] });
      expect(await ids("p", "weather sunshine")).to.deep.equal({ count: 0, ids: [] });
      expect(await ids("p", "zzz")).to.deep.equal({ count: 0, ids: [] });
      // Only the last word is a beginning: one before it must be a whole word.
      expect(await ids("p", "sachbu herbst")).to.deep.equal({ count: 0, ids: [] });
      expect(await ids("p", "book terrace")).to.deep.equal({ count: 0, ids: [] });
      expect(await ids("p", "terrace book")).to.deep.equal({ count: 1, ids: ["cafe"] });
      // ... and only from three letters on: a shorter last word is a whole word too.
      expect(await ids("p", "im")).to.deep.equal({ count: 1, ids: ["buecher"] });
      expect(await ids("p", "ne")).to.deep.equal({ count: 0, ids: [] });
      expect(await ids("p", "neu")).to.deep.equal({ count: 1, ids: ["buecher"] });
      // A last word that an earlier one begins, or typed whole before, adds nothing.
      expect(await ids("p", "terrace ter")).to.deep.equal({ count: 1, ids: ["cafe"] });
      expect(await ids("p", "tables rain tables")).to.deep.equal({ count: 1, ids: ["cafe"] });
      expect(await ids("p", "table rain table")).to.deep.equal({ count: 0, ids: [] });
    });

    it("folds letters the same way on every store: ligatures, fullwidth and other compatibility forms, final sigma", async () => {
      await store.insert(draft("p", { id: "lig", title: "Quarterly ﬁnance", text: "Ｂücher und ＡＵＤＩＯ." }), at(1_700_000_000));
      await store.insert(draft("p", { id: "greek", title: "ΟΔΟΣ", text: "Emissions of CO₂ fell." }), at(1_700_000_010));
      expect(await ids("p", "finance")).to.deep.equal({ count: 1, ids: ["lig"] });
      expect(await ids("p", "ﬁnance")).to.deep.equal({ count: 1, ids: ["lig"] });
      expect(await ids("p", "bucher audio")).to.deep.equal({ count: 1, ids: ["lig"] });
      expect(await ids("p", "co2")).to.deep.equal({ count: 1, ids: ["greek"] });
      expect(await ids("p", "οδος")).to.deep.equal({ count: 1, ids: ["greek"] });
      expect(await ids("p", "Οδός")).to.deep.equal({ count: 1, ids: ["greek"] });
    });

    it("finds by a beginning shared by many words as by one shared by few", async () => {
      // Forty words beginning "zab" (more than the embedded store asks one at a time) in one article, one in another.
      const many = Array.from({ length: 40 }, (_, i) => `zab${String.fromCharCode(97 + (i % 20))}${String.fromCharCode(97 + Math.floor(i / 20))}x`).join(" ");
      await store.insert(draft("p", { id: "many", title: "Many", text: many }), at(1_700_000_000));
      await store.insert(draft("p", { id: "one", title: "One zabzz", text: "x" }), at(1_700_000_010));
      await store.insert(draft("other", { id: "elsewhere", title: "Zabaax", text: "x" }), at(1_700_000_020));
      expect(await ids("p", "zab")).to.deep.equal({ count: 2, ids: ["one", "many"] });
      expect(await ids("p", "zabz")).to.deep.equal({ count: 1, ids: ["one"] });
      expect(await ids("p", "many zabc")).to.deep.equal({ count: 1, ids: ["many"] });
      expect(await ids("p", "zaba")).to.deep.equal({ count: 1, ids: ["many"] });
      expect(await ids("p", "zabu")).to.deep.equal({ count: 0, ids: [] });
    });

    it("ranks title matches first, then newest first; pages with a count of all matches", async () => {
      // Same text length everywhere: only where the word stands and when the article came tell them apart.
      await store.insert(draft("p", { id: "old-title", title: "Harbour news", text: "Nothing else at all." }), at(1_700_000_000));
      for (let i = 0; i < 5; i++) await store.insert(draft("p", { id: `text-${i}`, title: "Other news", text: "Down at the harbour." }), at(1_700_000_100 + i));
      await store.insert(draft("p", { id: "unrelated", title: "Unrelated", text: "Down at the station." }), at(1_700_000_200));
      const want = ["old-title", "text-4", "text-3", "text-2", "text-1", "text-0"];
      expect(await ids("p", "harb")).to.deep.equal({ count: 6, ids: want });
      const pages = [await ids("p", "harb", {}, 4, 0), await ids("p", "harb", {}, 4, 4), await ids("p", "harb", {}, 4, 8)];
      expect(pages.map((p) => p.count)).to.deep.equal([6, 6, 6]);
      expect(pages.flatMap((p) => p.ids)).to.deep.equal(want);
    });

    it("past its bounds, ranks only the newest matches and counts up to a cap, paging on through every match", async () => {
      // a-0 oldest; a-0 and a-5 hold the word in their titles. Bounds: the newest 3 ranked, 4 counted.
      for (let i = 0; i < 7; i++) await store.insert(draft("p", { id: `a-${i}`, title: i % 5 === 0 ? "Harbour news" : "Other news", text: "Down at the harbour." }), at(1_700_000_000 + i));
      const bounded = async (searchBounds: { countUpTo: number; rankWithin: number }, limit: number, offset: number) => {
        const page = await store.list("p", limit, offset, { words: words("harbour"), searchBounds });
        return { count: page.count, capped: page.countCapped === true, ids: page.items.map((a) => a.id) };
      };
      const small = { countUpTo: 4, rankWithin: 3 };
      // a-0's title does not lift it: it is not among the newest 3; the older ones follow newest first.
      const want = ["a-5", "a-6", "a-4", "a-3", "a-2", "a-1", "a-0"];
      const pages = [await bounded(small, 2, 0), await bounded(small, 2, 2), await bounded(small, 2, 4), await bounded(small, 2, 6)];
      expect(pages.flatMap((p) => p.ids)).to.deep.equal(want);
      expect(pages.map((p) => [p.count, p.capped])).to.deep.equal(Array(4).fill([4, true]));
      expect(await bounded(small, 10, 0)).to.deep.equal({ count: 4, capped: true, ids: want });
      expect(await bounded(small, 10, 7)).to.deep.equal({ count: 4, capped: true, ids: [] });
      // Exactly as many matches as counted: exact, not capped.
      expect(await bounded({ countUpTo: 7, rankWithin: 3 }, 10, 0)).to.deep.equal({ count: 7, capped: false, ids: want });
      // Every match ranked: a-0's title puts it second.
      expect(await bounded({ countUpTo: 7, rankWithin: 7 }, 3, 0)).to.deep.equal({ count: 7, capped: false, ids: ["a-5", "a-0", "a-6"] });
      // With a status filter, the bounds are of the matches that pass it.
      await store.claim("a-1", 1);
      await store.complete("a-1", 1, { audio: { key: "k", duration: 1 } });
      const ready = await store.list("p", 10, 0, { words: words("harbour"), status: "ready", searchBounds: { countUpTo: 1, rankWithin: 1 } });
      expect([ready.count, ready.countCapped === true, ready.items.map((a) => a.id)]).to.deep.equal([1, false, ["a-1"]]);
    });

    it("combines with status and label, stays in the project, and never finds a deleted article", async () => {
      const a = await store.insert(draft("p", { id: "ready-news", title: "Nabu report", text: "x", labels: ["news"] }), at(1_700_000_000));
      await store.insert(draft("p", { id: "waiting-news", title: "Nabu again", text: "x", labels: ["news"] }), at(1_700_000_001));
      await store.insert(draft("p", { id: "waiting", title: "More nabu", text: "x" }), at(1_700_000_002));
      const gone = await store.insert(draft("p", { id: "gone", title: "Nabu gone", text: "x" }), at(1_700_000_003));
      await store.insert(draft("other", { id: "elsewhere", title: "Nabu elsewhere", text: "x", labels: ["news"] }), at(1_700_000_004));
      await store.claim(a.id, 1);
      await store.complete(a.id, 1, { audio: { key: "k", duration: 1 } });
      await store.markDeleted("p", gone.id);
      expect((await ids("p", "nabu")).ids).to.have.members(["ready-news", "waiting-news", "waiting"]);
      expect(await ids("p", "nabu", { status: "ready" })).to.deep.equal({ count: 1, ids: ["ready-news"] });
      expect((await ids("p", "nabu", { label: "news" })).ids).to.have.members(["ready-news", "waiting-news"]);
      expect(await ids("p", "nabu", { status: "waiting", label: "news" })).to.deep.equal({ count: 1, ids: ["waiting-news"] });
      expect(await ids("p", "nabu", { status: "deleted" })).to.deep.equal({ count: 0, ids: [] });
      expect(await ids("other", "nabu")).to.deep.equal({ count: 1, ids: ["elsewhere"] });
      expect(await ids("p", "gone")).to.deep.equal({ count: 0, ids: [] });
    });

    it("follows edits: a changed title or text is found by its new words only, and another field's edit keeps the words", async () => {
      await store.insert(draft("p", { id: "e", title: "Spring", text: "Blossoms everywhere." }), at(1_700_000_000));
      expect((await store.update("p", "e", 1, { title: "Autumn" })).ok).to.equal(true);
      expect(await ids("p", "spring")).to.deep.equal({ count: 0, ids: [] });
      expect(await ids("p", "autumn blossoms")).to.deep.equal({ count: 1, ids: ["e"] });
      expect((await store.update("p", "e", 2, { text: "Falling leaves." })).ok).to.equal(true);
      expect(await ids("p", "blossoms")).to.deep.equal({ count: 0, ids: [] });
      expect((await store.update("p", "e", 3, { labels: ["x"] })).ok).to.equal(true);
      await store.claim("e", 4);
      await store.complete("e", 4, { audio: { key: "k", duration: 1 } });
      expect(await ids("p", "autumn leaves", { status: "ready" })).to.deep.equal({ count: 1, ids: ["e"] });
    });

    it("finds the words of an HTML text, not its markup", async () => {
      await store.insert(draft("p", { id: "h", title: "Page", text: '<p class="lead">Hello <b>world</b></p>', parse: true }), at(1_700_000_000));
      expect(await ids("p", "hello world")).to.deep.equal({ count: 1, ids: ["h"] });
      expect(await ids("p", "lead")).to.deep.equal({ count: 0, ids: [] });
    });
  });
}

searchContract("SQLite", sqliteStoreFixture);
searchContract("SQLite in memory", memoryStoreFixture);

describe("article search on MongoDB", function () {
  const mongo = mongoStoreFixtures("articles_search");
  searchContract("MongoDB", mongo.fixture);

  it("finds the articles an older release stored without words, once the background fill is done", async () => {
    const db = await mongo.db();
    const raw = db.collection<ArticleDoc>("upgraded");
    for (let i = 0; i < 30; i++) {
      const a = initialArticle(draft("p", { id: `old-${i}`, title: `Archive ${i % 2 ? "Zürich" : "Bern"}`, text: "x" }), at(1_700_000_000 + i));
      await raw.insertOne(mongoLayout.toDoc(a));
    }
    const store = await openMongoArticleStore(db, "upgraded");
    await store.searchComplete!();
    expect((await store.list("p", 100, 0, { words: words("zurich") })).count).to.equal(15);
  });
});

describe("article search on SQLite opened on a database of the previous release", () => {
  it("indexes the articles already there in the background; writes meanwhile are found too", async () => {
    await inTempDir("articles-search-old-", async (dir) => {
      const db = await openSqliteDatabase({ filename: articlesDatabaseFile(dir), what: "articles" });
      const raw = db.collection<ArticleDoc>("articles", { packed: ["text", "crawledText"] });
      // More than one page of the fill, and a deleted one that is never found.
      for (let i = 0; i < 600; i++) {
        const a = initialArticle(draft("p", { id: `old-${i}`, title: `Archive ${i % 3 ? "Zürich" : "Bern"}`, text: `Text number ${i}.` }), at(1_700_000_000 + i));
        await raw.insertOne(embeddedLayout.toDoc({ ...a, status: i === 0 ? "deleted" : a.status }));
      }
      await raw.close();
      await db.close();

      const store = await openEmbeddedArticleStore({ dataDir: dir });
      await store.insert(draft("p", { id: "new", title: "Fresh from Zürich", text: "y" }), at(1_800_000_000));
      await store.update("p", "old-1", 1, { title: "Edited in Zürich" });
      await store.searchComplete!();
      const page = await store.list("p", 10, 0, { words: words("zurich") });
      expect(page.count).to.equal(400 + 1);
      expect(page.items[0].id).to.equal("new");
      expect((await store.list("p", 10, 0, { words: words("bern") })).count).to.equal(199);
      await store.close();
      // Once filled, a restart does not fill again, and the index is still whole.
      const again = await openEmbeddedArticleStore({ dataDir: dir });
      await again.searchComplete!();
      expect((await again.list("p", 10, 0, { words: words("zurich") })).count).to.equal(401);
      await again.close();
    });
  });
});

describe("article search on SQLite opened on an index that did not keep its projects", () => {
  // A search skips the intersection with its project while the index has only ever held one; an
  // index of the release before did not record which it held, and is given them at the start.
  it("still finds only the token's project's articles", async () => {
    await inTempDir("articles-search-scopes-", async (dir) => {
      const store = await openEmbeddedArticleStore({ dataDir: dir });
      await store.insert(draft("p", { id: "mine", title: "Harbour", text: "x" }), at(1_700_000_000));
      await store.insert(draft("other", { id: "theirs", title: "Harbour", text: "x" }), at(1_700_000_001));
      await store.close();
      const direct = new (sqliteDriver())(articlesDatabaseFile(dir)!);
      const removed = direct.prepare(`DELETE FROM "c_articles__search__terms" WHERE term < char(2)`).run().changes;
      direct.close();
      expect(removed).to.equal(2);
      const again = await openEmbeddedArticleStore({ dataDir: dir });
      try {
        await again.searchComplete!();
        // A write of one project after the start: were the others not recorded, its would be the only one.
        await again.insert(draft("p", { id: "mine-too", title: "Harbour again", text: "x" }), at(1_700_000_002));
        expect((await again.list("p", 10, 0, { words: words("harbour") })).items.map((a) => a.id)).to.deep.equal(["mine-too", "mine"]);
        expect((await again.list("other", 10, 0, { words: words("harbour") })).items.map((a) => a.id)).to.deep.equal(["theirs"]);
      } finally {
        await again.close();
      }
    });
  });
});

describe("article search on SQLite opened on an index of many segments", () => {
  // Each write transaction adds a segment to FTS5's index; a query looks each word up in every
  // one. With FTS5's own merging switched off, 12 writes leave 12: the start merges them into one.
  it("merges them in the background, and finds the same articles after", async () => {
    await inTempDir("articles-search-segments-", async (dir) => {
      const file = articlesDatabaseFile(dir)!;
      const store = await openEmbeddedArticleStore({ dataDir: dir });
      await store.searchComplete!();
      const direct = new (sqliteDriver())(file);
      const tables = ["c_articles__search__fts", "c_articles__search__rank"];
      for (const t of tables) direct.prepare(`INSERT INTO "${t}" ("${t}", rank) VALUES ('automerge', 0)`).run();
      for (let i = 0; i < 12; i++) await store.insert(draft("p", { id: `a-${i}`, title: i % 2 ? "Harbour report" : "Report", text: `Down at the harbour${i % 3}.` }), at(1_700_000_000 + i));
      const segments = () => tables.map((t) => direct.prepare(`SELECT count(DISTINCT segid) FROM "${t}_idx"`).pluck().get());
      expect(segments()).to.deep.equal([12, 12]);
      const found = async (s: ArticleStore, q: string) => (await s.list("p", 100, 0, { words: words(q) })).items.map((a) => a.id);
      const before = [await found(store, "harbour"), await found(store, "report harbour1")];
      await store.close();
      const again = await openEmbeddedArticleStore({ dataDir: dir });
      try {
        await again.searchComplete!();
        expect(segments()).to.deep.equal([1, 1]);
        expect([await found(again, "harbour"), await found(again, "report harbour1")]).to.deep.equal(before);
        expect(before[0]).to.deep.equal(["a-11", "a-9", "a-7", "a-5", "a-3", "a-1", "a-10", "a-8", "a-6", "a-4", "a-2", "a-0"]);
      } finally {
        await again.close();
        direct.close();
      }
    });
  });
});

describe("article search on SQLite after the operator's VACUUM", () => {
  // The index names articles by their table's rowid. VACUUM keeps the rowids of a table with an
  // index (the articles' `_id` key is one) and renumbers those of a table without: should a
  // SQLite release change that, every search would answer other articles (docs/operations.md).
  it("still answers the articles that hold the words, after rows were removed before it", async () => {
    await inTempDir("articles-search-vacuum-", async (dir) => {
      const file = articlesDatabaseFile(dir);
      const db = await openSqliteDatabase({ filename: file, what: "articles" });
      const raw = db.collection<ArticleDoc>("articles", { packed: ["text", "crawledText"] });
      await (await raw.ensureTextIndex!(SEARCH_INDEX)).complete;
      for (let i = 0; i < 60; i++) {
        const a = initialArticle(draft("p", { id: `a-${i}`, title: `Report ${i % 2 ? "Zürich" : "Bern"} number${i}`, text: "x" }), at(1_700_000_000 + i));
        await raw.insertOne(embeddedLayout.toDoc(a));
      }
      // Gaps in the rowids: what VACUUM would close up if it renumbered.
      await raw.deleteMany({ _id: { $in: Array.from({ length: 20 }, (_, i) => `a-${i * 3}`) } });
      await raw.close();
      await db.close();
      const direct = new (sqliteDriver())(file);
      direct.exec("VACUUM");
      direct.close();

      const store = await openEmbeddedArticleStore({ dataDir: dir });
      try {
        await store.searchComplete!();
        const kept = Array.from({ length: 60 }, (_, i) => i).filter((i) => i % 3 !== 0);
        const zurich = await store.list("p", 100, 0, { words: words("zurich") });
        expect(zurich.items.map((a) => a.id)).to.deep.equal(kept.filter((i) => i % 2).reverse().map((i) => `a-${i}`));
        for (const i of [1, 2, 58, 59]) expect((await store.list("p", 10, 0, { words: words(`number${i} report`) })).items.map((a) => a.id)).to.deep.equal([`a-${i}`]);
        expect((await store.list("p", 10, 0, { words: words("number3 report") })).count).to.equal(0);
      } finally {
        await store.close();
      }
    });
  });
});
