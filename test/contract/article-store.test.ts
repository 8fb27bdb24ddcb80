import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { expect } from "chai";
import { closeMongo, mongoDb } from "../../lib/mongo.js";
import { openMongoArticleStore, openNedbArticleStore } from "../../services/articles/store/open.js";
import { requireMongo } from "../support/servers.js";
import { articleStoreContract } from "./article-store.contract.js";

articleStoreContract("NeDB", async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), "articles-nedb-"));
  const store = await openNedbArticleStore({ dataDir: dir });
  return {
    store,
    async dispose() {
      await store.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
});

describe("NeDB article store persistence", () => {
  it("keeps articles, the unique externalId and revisions across a reopen", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "articles-nedb-"));
    try {
      const first = await openNedbArticleStore({ dataDir: dir });
      const base = { projectId: "p", title: "T", text: "x", isRaw: false, parse: false, voice: "alloy", lang: "en-US", labels: [] };
      await first.insert({ ...base, id: "one", externalId: "e1" });
      await first.update("p", "one", 1, { title: "T2" });
      await first.close();
      const second = await openNedbArticleStore({ dataDir: dir });
      expect(await second.get("p", "one")).to.include({ title: "T2", revision: 2 });
      let err: unknown;
      await second.insert({ ...base, id: "two", externalId: "e1" }).catch((e) => (err = e));
      expect((err as Error)?.name).to.equal("DuplicateExternalIdError");
      await second.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("MongoDB article store", function () {
  let url: string;
  const dbName = `articles_contract_${process.pid}_${Date.now().toString(36)}`;
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
  articleStoreContract("MongoDB", async () => {
    const db = await mongoDb(url, dbName);
    const name = `articles_${n++}`;
    const store = await openMongoArticleStore(db, name);
    return {
      store,
      async dispose() {
        await db.collection(name).drop().catch(() => {});
      },
    };
  });

  it("creates its indexes idempotently", async () => {
    const db = await mongoDb(url, dbName);
    await openMongoArticleStore(db, "idx_check");
    await openMongoArticleStore(db, "idx_check");
    const names = (await db.collection("idx_check").indexes()).map((i) => i.name);
    expect(names).to.include.members(["project_listing", "externalId_unique", "project_url", "status_updatedAt"]);
  });
});
