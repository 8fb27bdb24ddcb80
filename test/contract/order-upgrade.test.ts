// The list order's keys for an archive of an older release (order-upgrade.ts), on both drivers:
// the store serves before the background pass ends (lists in the previous order meanwhile), the
// pass gives every article the keys the list order needs, and a pass stopped mid-way (a process
// stopped at a page) goes on from its position at the next start and ends the same.
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { expect } from "chai";
import type { DocumentCollection } from "../../lib/store/collection.js";
import { openSqliteDatabase, type SqliteDatabase } from "../../lib/store/sqlite-collection.js";
import { mongoCollection } from "../../lib/store/mongo-collection.js";
import { embeddedLayout, mongoLayout, type ArticleDoc, type ArticleLayout } from "../../services/articles/store/layout.js";
import { LEGACY_SORT, LIST_SORT, seqOfAdded } from "../../services/articles/store/order.js";
import { upgradeOrder } from "../../services/articles/store/order-upgrade.js";
import { initialArticle, TEXT_FIELDS } from "../../services/articles/store/port.js";
import { mongoStoreFixtures } from "./article-store-fixtures.js";

const SECOND = 1_700_000_000;
/** Small pages, so that a pass of a few hundred articles has several. */
const PAGE = 100;
/** More than two pages, so a pass can be stopped between them. */
const N = PAGE * 3 + 21;

/** Article i as a release before the list order stored it (no keys), created at second SECOND + i / 7. */
function oldDoc(layout: ArticleLayout, i: number): ArticleDoc {
  const a = initialArticle(
    { id: `old-${String(i).padStart(6, "0")}`, projectId: i % 2 ? "p" : "q", title: `T${i}`, text: "x", isRaw: false, parse: false, voice: "alloy", lang: "en-US", labels: i % 3 ? [] : ["a"] },
    new Date((SECOND + Math.floor(i / 7)) * 1000),
  );
  const { sortAt: _s, seq: _q, ...rest } = layout.toDoc(a);
  return rest as ArticleDoc;
}

interface Driver {
  col: DocumentCollection<ArticleDoc>;
  marks: DocumentCollection<never>;
  close(): Promise<void>;
}

function upgradeContract(name: string, layout: ArticleLayout, open: () => Promise<Driver>, seed: (col: DocumentCollection<ArticleDoc>, docs: ArticleDoc[]) => Promise<void>): void {
  describe(`list order upgrade of an older archive: ${name}`, function () {
    this.timeout(120_000);

    async function expectKeyed(col: DocumentCollection<ArticleDoc>): Promise<void> {
      const docs = await col.find({}, { projection: { _id: 1, added: 1, seq: 1, sortAt: 1 } });
      expect(docs).to.have.length(N);
      const wrong = docs.filter((d) => d.seq !== seqOfAdded(d.added) || d.sortAt !== d.added * 1000);
      expect(wrong.slice(0, 3), `${wrong.length} articles without the right keys`).to.deep.equal([]);
    }

    it("answers before the pass ends, in the previous order, and lists in the list order once it has", async () => {
      const d = await open();
      try {
        await seed(d.col, Array.from({ length: N }, (_, i) => oldDoc(layout, i)));
        const up = await upgradeOrder(d.col, d.marks, layout, () => false, PAGE);
        // The store is open and serving while the pass still has pages to go.
        expect(up.ordered()).to.equal(false);
        const legacy = await d.col.find({ projectId: "p", deleted: false }, { sort: LEGACY_SORT, limit: 3, projection: { _id: 1 } });
        expect(legacy.map((x) => x._id)).to.deep.equal(["old-000319", "old-000317", "old-000315"]);
        expect(await d.col.count({ seq: { $exists: true } })).to.be.below(N);
        await up.done;
        expect(up.ordered()).to.equal(true);
        await expectKeyed(d.col);
        // Newest first by the keys; within a second the articles tie (they keep their storage order).
        const listed = await d.col.find({ projectId: "p", deleted: false }, { sort: LIST_SORT, limit: 10, projection: { _id: 1, added: 1 } });
        expect(listed.map((x) => x.added)).to.deep.equal([...listed.map((x) => x.added)].sort((a, b) => b - a));
        expect(listed[0].added).to.equal(SECOND + Math.floor((N - 2) / 7));
        // A second start finds the pass done: ordered at once.
        expect((await upgradeOrder(d.col, d.marks, layout, () => false, PAGE)).ordered()).to.equal(true);
      } finally {
        await d.close();
      }
    });

    it("a pass stopped after a page goes on from there at the next start and ends with every article keyed once", async () => {
      const d = await open();
      try {
        await seed(d.col, Array.from({ length: N }, (_, i) => oldDoc(layout, i)));
        let pages = 0;
        const first = await upgradeOrder(d.col, d.marks, layout, () => ++pages > 1, PAGE);
        await first.done;
        expect(first.ordered()).to.equal(false);
        expect(await d.col.count({ seq: { $exists: true } })).to.equal(PAGE);
        const second = await upgradeOrder(d.col, d.marks, layout, () => false, PAGE);
        expect(second.ordered()).to.equal(false);
        await second.done;
        expect(second.ordered()).to.equal(true);
        await expectKeyed(d.col);
        const position = (await d.marks.findOne({ _id: "\u0000progress:order" })) as unknown as { given: number };
        // Each article counted once over both starts: the second did not give the first's page again.
        expect(position.given).to.equal(N);
      } finally {
        await d.close();
      }
    });
  });
}

upgradeContract(
  "SQLite",
  embeddedLayout,
  async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "order-upgrade-"));
    const db: SqliteDatabase = await openSqliteDatabase({ filename: path.join(dir, "articles.sqlite"), what: "articles" });
    const col = db.collection<ArticleDoc>("articles", { packed: TEXT_FIELDS });
    const marks = db.collection<never>("pronunciations");
    return {
      col,
      marks,
      async close() {
        await col.close();
        await marks.close();
        await db.close();
        await rm(dir, { recursive: true, force: true });
      },
    };
  },
  async (col, docs) => {
    await Promise.all(docs.map((doc) => col.insertOne(doc)));
  },
);

describe("MongoDB", () => {
  const mongo = mongoStoreFixtures("order_upgrade");
  let n = 0;
  upgradeContract(
    "MongoDB",
    mongoLayout,
    async () => {
      const db = await mongo.db();
      n++;
      return { col: mongoCollection<ArticleDoc>(db, `articles_${n}`), marks: mongoCollection<never>(db, `articles_${n}_pronunciations`), close: async () => undefined };
    },
    async (col, docs) => {
      await Promise.all(docs.map((doc) => col.insertOne(doc)));
    },
  );
});
