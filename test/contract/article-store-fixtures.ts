// Where the ArticleStore contract suites (articles, pronunciation rules) get
// a fresh store for each test: an SQLite directory of its own, or a MongoDB
// collection of its own in a database the suite drops at the end.
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { closeMongo, mongoDb } from "../../lib/mongo.js";
import { openMongoArticleStore, openEmbeddedArticleStore } from "../../services/articles/store/open.js";
import { requireMongo } from "../support/servers.js";
import type { StoreFixture } from "./article-store.contract.js";

export type { StoreFixture };

export async function sqliteStoreFixture(): Promise<StoreFixture> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "articles-sqlite-"));
  const store = await openEmbeddedArticleStore({ dataDir: dir });
  return {
    store,
    async dispose() {
      await store.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** The embedded store without a directory: its database lives in memory (tests, tools). */
export async function memoryStoreFixture(): Promise<StoreFixture> {
  const store = await openEmbeddedArticleStore();
  return { store, dispose: () => store.close() };
}

/** Call inside a describe: its hooks need MongoDB and drop the suite's database afterwards. */
export function mongoStoreFixtures(dbPrefix: string): { fixture: () => Promise<StoreFixture>; db: () => ReturnType<typeof mongoDb> } {
  let url = "";
  const dbName = `${dbPrefix}_${process.pid}_${Date.now().toString(36)}`;
  before(async function () {
    url = await requireMongo(this);
  });
  after(async () => {
    if (url) {
      await (await mongoDb(url, dbName)).dropDatabase();
      await closeMongo();
    }
  });
  let n = 0;
  const db = () => mongoDb(url, dbName);
  return {
    db,
    async fixture() {
      const d = await db();
      const name = `articles_${n++}`;
      const store = await openMongoArticleStore(d, name);
      return {
        store,
        async dispose() {
          await d.collection(name).drop().catch(() => {});
          await d.collection(`${name}_pronunciations`).drop().catch(() => {});
        },
      };
    },
  };
}
