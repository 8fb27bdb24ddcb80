// The pronunciation half of the ArticleStore, on both drivers: one list per
// project, replaced whole, kept across a reopen (SQLite file) and independent
// of the articles themselves.
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { expect } from "chai";
import type { PronunciationRule } from "../../lib/pronunciations.js";
import { openEmbeddedArticleStore } from "../../services/articles/store/open.js";
import { mongoStoreFixtures, sqliteStoreFixture, type StoreFixture } from "./article-store-fixtures.js";

const RULES: PronunciationRule[] = [
  { match: "Nguyen", ipa: "ŋwiən", say: "Win" },
  { match: "BASF", spell: true, lang: "de" },
  { match: "Saoirse", say: "Sur-sha", caseSensitive: true },
];

function pronunciationStoreContract(name: string, open: () => Promise<StoreFixture>): void {
  describe(`ArticleStore pronunciations contract: ${name}`, function () {
    this.timeout(30_000);
    let fx: StoreFixture;
    beforeEach(async () => {
      fx = await open();
    });
    afterEach(async () => {
      await fx.dispose();
    });

    it("has an empty list for a project that never set one", async () => {
      expect(await fx.store.getPronunciations("nobody")).to.deep.equal([]);
    });

    it("stores the list in order and replaces it whole", async () => {
      await fx.store.setPronunciations("p", RULES);
      expect(await fx.store.getPronunciations("p")).to.deep.equal(RULES);
      await fx.store.setPronunciations("p", [RULES[2]]);
      expect(await fx.store.getPronunciations("p")).to.deep.equal([RULES[2]]);
    });

    it("keeps projects apart", async () => {
      await fx.store.setPronunciations("p", RULES);
      await fx.store.setPronunciations("q", [RULES[0]]);
      expect(await fx.store.getPronunciations("p")).to.deep.equal(RULES);
      expect(await fx.store.getPronunciations("q")).to.deep.equal([RULES[0]]);
    });

    it("removes the list with an empty one", async () => {
      await fx.store.setPronunciations("p", RULES);
      await fx.store.setPronunciations("p", []);
      expect(await fx.store.getPronunciations("p")).to.deep.equal([]);
    });

    it("hands out copies: changing what was read or written does not change the store", async () => {
      const mine = RULES.map((r) => ({ ...r }));
      await fx.store.setPronunciations("p", mine);
      mine[0].say = "changed";
      const read = await fx.store.getPronunciations("p");
      read[1].match = "changed";
      expect(await fx.store.getPronunciations("p")).to.deep.equal(RULES);
    });

    it("settles concurrent first writes on one of the lists, never a mix or an error", async () => {
      const a = [RULES[0]];
      const b = [RULES[1], RULES[2]];
      await Promise.all([fx.store.setPronunciations("race", a), fx.store.setPronunciations("race", b)]);
      expect([a, b]).to.deep.include(await fx.store.getPronunciations("race"));
    });

    it("stores rules beside articles without touching them", async () => {
      await fx.store.insert({ id: "art-1", projectId: "p", title: "T", text: "x", isRaw: false, parse: false, voice: "alloy", lang: "en-US", labels: [] });
      await fx.store.setPronunciations("p", RULES);
      expect((await fx.store.list("p", 10, 0)).count).to.equal(1);
      expect((await fx.store.get("p", "art-1"))?.pronunciations).to.equal(undefined);
    });
  });
}

pronunciationStoreContract("SQLite", sqliteStoreFixture);

describe("SQLite pronunciation rules persistence", () => {
  it("keeps the lists across a reopen", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "pron-sqlite-"));
    try {
      const first = await openEmbeddedArticleStore({ dataDir: dir });
      await first.setPronunciations("p", RULES);
      await first.close();
      const second = await openEmbeddedArticleStore({ dataDir: dir });
      expect(await second.getPronunciations("p")).to.deep.equal(RULES);
      await second.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("MongoDB pronunciation rules", function () {
  pronunciationStoreContract("MongoDB", mongoStoreFixtures("pron_contract").fixture);
});
