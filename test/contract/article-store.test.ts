import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { expect } from "chai";
import { MongoServerError, type Db } from "mongodb";
import { openSqliteDatabase } from "../../lib/store/sqlite-collection.js";
import { embeddedLayout, type ArticleDoc } from "../../services/articles/store/layout.js";
import { articlesDatabaseFile, openMongoArticleStore, openEmbeddedArticleStore } from "../../services/articles/store/open.js";
import { initialArticle } from "../../services/articles/store/port.js";
import { articleStoreContract } from "./article-store.contract.js";
import { memoryStoreFixture, mongoStoreFixtures, sqliteStoreFixture } from "./article-store-fixtures.js";

articleStoreContract("SQLite", sqliteStoreFixture);
articleStoreContract("SQLite in memory", memoryStoreFixture);

describe("SQLite article store persistence", () => {
  it("keeps articles, the unique externalId, revisions and transcripts across a reopen", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "articles-sqlite-"));
    try {
      const first = await openEmbeddedArticleStore({ dataDir: dir });
      const base = { projectId: "p", title: "T", text: "x", isRaw: false, parse: false, voice: "alloy", lang: "en-US", labels: [] };
      await first.insert({ ...base, id: "one", externalId: "e1" });
      await first.update("p", "one", 1, { title: "T2" });
      await first.complete("one", 2, { audio: { key: "one/2/full.mp3", duration: 2 }, transcript: { chapters: true } });
      await first.close();
      const second = await openEmbeddedArticleStore({ dataDir: dir });
      expect(await second.get("p", "one")).to.deep.include({ title: "T2", revision: 2, transcript: { chapters: true } });
      let err: unknown;
      await second.insert({ ...base, id: "two", externalId: "e1" }).catch((e) => (err = e));
      expect((err as Error)?.name).to.equal("DuplicateExternalIdError");
      await second.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("SQLite article store opened on a database of the previous release", () => {
  it("counts and indexes the articles already there once, so the list filters are exact from the first request", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "articles-sqlite-old-"));
    try {
      // Articles as the previous release left them: no filtered counts, no label entries.
      const db = await openSqliteDatabase({ filename: articlesDatabaseFile(dir), what: "articles" });
      const raw = db.collection<ArticleDoc>("articles");
      const statuses = ["waiting", "ready", "errored", "deleted"] as const;
      for (let i = 0; i < 40; i++) {
        const a = initialArticle({ id: `old-${i}`, projectId: "p", title: "T", text: "x", isRaw: false, parse: false, voice: "alloy", lang: "en-US", labels: i % 3 ? ["a"] : ["a", "b"] }, new Date(1_700_000_000_000 + i * 1000));
        await raw.insertOne(embeddedLayout.toDoc({ ...a, status: statuses[i % 4] }));
      }
      await raw.close();
      await db.close();

      const store = await openEmbeddedArticleStore({ dataDir: dir });
      const want = (status: string | undefined, label: string | undefined) =>
        Array.from({ length: 40 }, (_, i) => i)
          .filter((i) => statuses[i % 4] !== "deleted" && (status === undefined || statuses[i % 4] === status) && (label === undefined || label === "a" || i % 3 === 0))
          .reverse()
          .map((i) => `old-${i}`);
      for (const status of [undefined, "waiting", "ready", "errored"] as const) {
        for (const label of [undefined, "a", "b"]) {
          const page = await store.list("p", 100, 0, { status, label });
          expect(page.items.map((a) => a.id), `${status} ${label}`).to.deep.equal(want(status, label));
          expect(page.count, `${status} ${label}`).to.equal(want(status, label).length);
        }
      }
      await store.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("MongoDB article store", function () {
  const mongo = mongoStoreFixtures("articles_contract");
  articleStoreContract("MongoDB", mongo.fixture);

  it("creates its indexes idempotently", async () => {
    const db = await mongo.db();
    await openMongoArticleStore(db, "idx_check");
    await openMongoArticleStore(db, "idx_check");
    const names = (await db.collection("idx_check").indexes()).map((i) => i.name);
    expect(names).to.include.members(["project_listing", "externalId_unique", "project_url_added", "project_ready", "project_order", "project_order_label", "project_status_order", "project_status_order_label", "due", "status_added", "tally_counters"]);
    expect(names, "retired").to.not.include.members(["project_listing_label"]);
  });
});

describe("MongoDB article store: a duplicate key the server does not attribute", function () {
  const mongo = mongoStoreFixtures("articles_dupkey");

  /** The real database, but its duplicate-key errors stripped of keyPattern, keyValue and index name, as some look-alikes send them. */
  async function anonymousDuplicates(): Promise<Db> {
    const db = await mongo.db();
    const strip = (e: unknown) =>
      e instanceof MongoServerError && e.code === 11000 ? new MongoServerError({ code: 11000, errmsg: "E11000 duplicate key error" }) : e;
    return new Proxy(db, {
      get(target, prop, receiver) {
        if (prop !== "collection") return Reflect.get(target, prop, receiver);
        return (name: string) => {
          const col = target.collection(name);
          return new Proxy(col, {
            get(c, p, r) {
              const v = Reflect.get(c, p, r) as unknown;
              if (typeof v !== "function") return v;
              if (p !== "insertOne" && p !== "findOneAndUpdate" && p !== "updateOne") return (v as (...a: unknown[]) => unknown).bind(c);
              return async (...args: unknown[]) => {
                try {
                  return await (v as (...a: unknown[]) => Promise<unknown>).apply(c, args);
                } catch (e) {
                  throw strip(e);
                }
              };
            },
          });
        };
      },
    });
  }

  const base = { title: "T", text: "x", isRaw: false, parse: false, voice: "alloy", lang: "en-US", labels: [] };

  it("attributes it to the externalId by looking it up (in the project or another one)", async () => {
    const store = await openMongoArticleStore(await anonymousDuplicates(), "anon_ext");
    await store.insert({ ...base, projectId: "p", id: "one", externalId: "e1" });
    for (const projectId of ["p", "q"]) {
      const err = await store.insert({ ...base, projectId, id: `two-${projectId}`, externalId: "e1" }).then(() => undefined, (e: Error) => e);
      expect(err?.name).to.equal("DuplicateExternalIdError");
    }
  });

  it("still tells a clash of ids apart", async () => {
    const store = await openMongoArticleStore(await anonymousDuplicates(), "anon_id");
    await store.insert({ ...base, projectId: "p", id: "same" });
    const err = await store.insert({ ...base, projectId: "p", id: "same", externalId: "fresh" }).then(() => undefined, (e: Error) => e);
    expect(err?.name).to.equal("DuplicateIdError");
  });
});
