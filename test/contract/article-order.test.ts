// The list order (issue 35) on both drivers, and on articles that releases before it stored
// without its keys: they list in the right order from the first request after the upgrade.
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { expect } from "chai";
import { openSqliteDatabase } from "../../lib/store/sqlite-collection.js";
import { embeddedLayout, mongoLayout, type ArticleDoc } from "../../services/articles/store/layout.js";
import { articlesDatabaseFile, openEmbeddedArticleStore, openMongoArticleStore } from "../../services/articles/store/open.js";
import { initialArticle, type ArticleStore, type StoredArticle } from "../../services/articles/store/port.js";
import { articleOrderContract } from "./article-order.contract.js";
import { memoryStoreFixture, mongoStoreFixtures, sqliteStoreFixture } from "./article-store-fixtures.js";

articleOrderContract("SQLite", sqliteStoreFixture);
articleOrderContract("SQLite in memory", memoryStoreFixture);

const SECOND = 1_700_000_000;

/** An article as a release before the list order stored it: no publication date, no order keys. */
function oldArticle(i: number, sec: number, labels: string[]): StoredArticle {
  const a = initialArticle({ id: `old-${i}`, projectId: "p", title: "T", text: "x", isRaw: false, parse: false, voice: "alloy", lang: "en-US", labels }, new Date(sec * 1000));
  const { sortAt: _s, seq: _q, ...rest } = a;
  return rest as StoredArticle;
}

/** The list once the background pass (order-upgrade.ts) has given the keys: until then it answers in the previous order. */
async function upgradedList(store: ArticleStore, newer: string): Promise<Awaited<ReturnType<ArticleStore["list"]>>> {
  for (let i = 0; ; i++) {
    const page = await store.list("p", 100, 0);
    if (page.items[2]?.id === newer || i === 600) return page;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The old articles (one per 10 s, three of them within one second) and a new one published between them. */
async function expectUpgradedOrder(store: ArticleStore): Promise<void> {
  const seconds = [0, 10, 20, 20, 20, 30, 40];
  const newer = await store.insert({ id: "new-published", projectId: "p", title: "T", text: "x", isRaw: false, parse: false, voice: "alloy", lang: "en-US", labels: ["a"], published: new Date((SECOND + 25) * 1000).toISOString() });
  const page = await upgradedList(store, newer.id);
  const listed = page.items.map((a) => a.id);
  // By time: 40, 30, the new one at 25, then the three of second 20 (any order among them), 10, 0.
  expect(listed.slice(0, 3)).to.deep.equal(["old-6", "old-5", newer.id]);
  expect(listed.slice(3, 6).sort()).to.deep.equal(["old-2", "old-3", "old-4"]);
  expect(listed.slice(6)).to.deep.equal(["old-1", "old-0"]);
  expect(page.count).to.equal(seconds.length + 1);
  // The label's list, through its own index, in the same order.
  const labelled = (await store.list("p", 100, 0, { label: "a" })).items.map((a) => a.id);
  expect(labelled).to.deep.equal(listed.filter((id) => id === newer.id || Number(id.split("-")[1]) % 2 === 0));
}

const OLD_SECONDS = [0, 10, 20, 20, 20, 30, 40];
const oldOnes = () => OLD_SECONDS.map((s, i) => oldArticle(i, SECOND + s, i % 2 === 0 ? ["a"] : []));

describe("SQLite article store on articles stored before the list order", () => {
  it("gives them their order keys once after open, so they list in time with new ones", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "articles-order-"));
    try {
      const db = await openSqliteDatabase({ filename: articlesDatabaseFile(dir), what: "articles" });
      const raw = db.collection<ArticleDoc>("articles");
      for (const a of oldOnes()) await raw.insertOne(embeddedLayout.toDoc(a));
      await raw.close();
      await db.close();
      const store = await openEmbeddedArticleStore({ dataDir: dir });
      try {
        await expectUpgradedOrder(store);
      } finally {
        await store.close();
      }
      // The keys are stored: a second open finds nothing to do and lists the same.
      const again = await openEmbeddedArticleStore({ dataDir: dir });
      try {
        expect((await again.list("p", 100, 0)).items).to.have.length(OLD_SECONDS.length + 1);
        const check = await openSqliteDatabase({ filename: articlesDatabaseFile(dir), what: "articles" });
        const docs = await check.collection<ArticleDoc>("articles").find({});
        expect(docs.every((d) => typeof d.seq === "number" && typeof d.sortAt === "number")).to.equal(true);
        await check.close();
      } finally {
        await again.close();
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("MongoDB article store: list order", function () {
  const mongo = mongoStoreFixtures("articles_order");
  articleOrderContract("MongoDB", mongo.fixture);

  it("gives articles stored before the list order their keys once after open, and drops the indexes it replaced", async () => {
    const db = await mongo.db();
    const col = db.collection("upgraded_order");
    await col.insertMany(oldOnes().map((a) => mongoLayout.toDoc(a)) as never[]);
    // The index an older release made for the label list, by `added` then id.
    await col.createIndex({ projectId: 1, deleted: 1, labels: 1, added: -1, _id: -1 }, { name: "project_listing_label" });
    const store = await openMongoArticleStore(db, "upgraded_order");
    await expectUpgradedOrder(store);
    const names = (await col.indexes()).map((i) => i.name);
    expect(names).to.include("project_order_label").and.not.include("project_listing_label");
    expect(await col.countDocuments({ _tallyOf: { $exists: false }, _tallyBuilt: { $exists: false }, seq: { $exists: false }, projectId: "p" })).to.equal(0);
  });
});
