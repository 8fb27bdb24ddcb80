// The port's filter, sort, projection and update language means the same on
// both drivers: the same cases on MongoDB (the stand-in) and on SQLite, with
// and without indexes on the fields (the SQLite driver translates an indexed
// field so that its index serves the query; lib/store/sqlite-filter.ts).
import { expect } from "chai";
import { randomBytes } from "node:crypto";
import { mongoDb } from "../../lib/mongo.js";
import type { DocumentCollection, Filter, FindOptions } from "../../lib/store/collection.js";
import { mongoCollection } from "../../lib/store/mongo-collection.js";
import { openSqliteCollection } from "../../lib/store/sqlite-collection.js";
import { requireMongo } from "../support/servers.js";

type Doc = { _id: string } & Record<string, unknown>;

const DOCS: Doc[] = [
  { _id: "a", s: "x", n: 1, tags: ["red", "blue"], sub: { k: "v" }, nul: null, flag: true },
  { _id: "b", s: "y", n: 2, tags: ["green"], sub: { k: "w" }, flag: false },
  { _id: "c", s: "10", n: 10, tags: [], nul: "z" },
  { _id: "d", n: "5" },
  { _id: "e", s: null, n: 2.5 },
];

const CASES: Array<[Filter, string[]]> = [
  [{}, ["a", "b", "c", "d", "e"]],
  [{ s: "x" }, ["a"]],
  [{ s: null }, ["d", "e"]],
  [{ nul: null }, ["a", "b", "d", "e"]],
  [{ tags: "red" }, ["a"]],
  [{ tags: { $in: ["green", "red"] } }, ["a", "b"]],
  [{ tags: { $nin: ["red"] } }, ["b", "c", "d", "e"]],
  [{ s: { $ne: "x" } }, ["b", "c", "d", "e"]],
  [{ s: { $ne: null } }, ["a", "b", "c"]],
  [{ s: { $in: ["y", null] } }, ["b", "d", "e"]],
  [{ s: { $nin: ["y", null] } }, ["a", "c"]],
  [{ s: { $in: [] } }, []],
  [{ n: 2 }, ["b"]],
  [{ n: 5 }, []],
  [{ n: "5" }, ["d"]],
  [{ s: "10" }, ["c"]],
  [{ n: { $gt: 1 } }, ["b", "c", "e"]],
  [{ n: { $lt: "6" } }, ["d"]],
  [{ n: { $gte: 2, $lte: 10 } }, ["b", "c", "e"]],
  [{ s: { $gte: "y" } }, ["b"]],
  [{ s: { $exists: true } }, ["a", "b", "c", "e"]],
  [{ s: { $exists: false } }, ["d"]],
  [{ "sub.k": "v" }, ["a"]],
  [{ "sub.k": { $exists: false } }, ["c", "d", "e"]],
  [{ $or: [{ s: "x" }, { n: 2 }] }, ["a", "b"]],
  [{ $and: [{ n: { $gte: 2 } }, { s: { $in: ["y", null] } }] }, ["b", "e"]],
  [{ $or: [{ nul: { $exists: false } }, { nul: { $lt: "zz" } }], n: { $lt: 3 } }, ["b", "e"]],
  [{ flag: true }, ["a"]],
  [{ flag: false }, ["b"]],
  [{ flag: { $ne: true } }, ["b", "c", "d", "e"]],
  [{ _id: { $gt: "b" } }, ["c", "d", "e"]],
  [{ _id: { $in: ["a", "e", "zz"] } }, ["a", "e"]],
  [{ _id: "c", n: { $exists: true } }, ["c"]],
  // A key with equalities beside it (SQLite answers these from the key alone when the fields are indexed).
  [{ _id: "c", s: "10" }, ["c"]],
  [{ _id: "c", n: "10" }, []],
  [{ _id: "d", n: "5" }, ["d"]],
  [{ _id: "b", flag: false }, ["b"]],
  [{ _id: "a", flag: false }, []],
  [{ _id: "d", s: "x" }, []],
  [{ _id: "zz", s: "x" }, []],
];

function filterSuite(name: string, open: () => Promise<{ col: DocumentCollection<Doc>; dispose(): Promise<void> }>) {
  describe(name, () => {
    let col: DocumentCollection<Doc>;
    let dispose: () => Promise<void>;
    before(async () => {
      ({ col, dispose } = await open());
      for (const d of DOCS) await col.insertOne(structuredClone(d));
    });
    after(() => dispose?.());

    const ids = async (f: Filter, o: FindOptions = { sort: { _id: 1 } }) => (await col.find(f, o)).map((d) => d._id);

    it("matches as MongoDB does: null and missing, arrays, types, $ne/$nin on missing fields, dotted paths, $or/$and", async () => {
      const wrong: string[] = [];
      for (const [f, expected] of CASES) {
        const got = await ids(f);
        if (JSON.stringify(got) !== JSON.stringify(expected)) wrong.push(`${JSON.stringify(f)}: ${JSON.stringify(got)} (expected ${JSON.stringify(expected)})`);
        if ((await col.count(f)) !== expected.length) wrong.push(`count ${JSON.stringify(f)}`);
      }
      expect(wrong).to.deep.equal([]);
    });

    it("sorts missing and null first, numbers before strings; skips, limits and projects", async () => {
      expect(await ids({}, { sort: { n: 1, _id: 1 } })).to.deep.equal(["a", "b", "e", "c", "d"]);
      expect(await ids({}, { sort: { s: -1, _id: 1 } })).to.deep.equal(["b", "a", "c", "d", "e"]);
      expect(await ids({}, { sort: { n: -1 }, skip: 1, limit: 2 })).to.deep.equal(["c", "e"]);
      expect(await col.find({ _id: "a" }, { projection: { s: 1, "sub.k": 1 } })).to.deep.equal([{ _id: "a", s: "x", sub: { k: "v" } }]);
      expect(await col.find({ _id: { $in: ["a", "b"] } }, { sort: { _id: 1 }, omit: ["tags", "sub"] })).to.deep.equal([
        { _id: "a", s: "x", n: 1, nul: null, flag: true },
        { _id: "b", s: "y", n: 2, flag: false },
      ]);
    });

    it("updates as MongoDB does: dotted $set creates, $unset, $inc and $push on missing fields, upsert from the key", async () => {
      await col.updateOne({ _id: "d" }, { $set: { "deep.er.x": 1, s: "new" }, $inc: { count: 2 }, $push: { list: { a: 1 } }, $unset: { n: true, missing: true } });
      expect(await col.findOne({ _id: "d" })).to.deep.equal({ _id: "d", deep: { er: { x: 1 } }, s: "new", count: 2, list: [{ a: 1 }] });
      const r = await col.updateMany({ tags: { $exists: true } }, { $push: { tags: "more" } });
      expect(r).to.deep.equal({ matched: 3, modified: 3 });
      expect((await col.findOne({ _id: "c" }))?.tags).to.deep.equal(["more"]);
      await col.upsertOne({ _id: "u", kind: "k" }, { $inc: { hits: 1 } });
      await col.upsertOne({ _id: "u", kind: "k" }, { $inc: { hits: 1 } });
      expect(await col.findOne({ _id: "u" })).to.deep.equal({ _id: "u", kind: "k", hits: 2 });
      expect(await col.updateOne({ _id: "u" }, { $set: { kind: "k" } })).to.deep.equal({ matched: 1, modified: 0 });
      expect(await col.findOneAndUpdate({ _id: "nobody" }, { $set: { x: 1 } })).to.equal(null);
      expect(await col.deleteMany({ _id: { $in: ["u", "d"] } })).to.equal(2);
    });
  });
}

const INDEXED = ["s", "n", "sub.k", "flag"];
let serial = 0;

describe("document filters: SQLite without indexes", () =>
  filterSuite("SQLite", async () => {
    const col = await openSqliteCollection<Doc>("things", { what: "things" });
    return { col, dispose: () => col.close() };
  }));

describe("document filters: SQLite with the fields indexed", () =>
  filterSuite("SQLite, indexed", async () => {
    const col = await openSqliteCollection<Doc>("things", { what: "things" });
    for (const f of INDEXED) await col.ensureIndex({ name: `ix_${f.replace(".", "_")}`, keys: { [f]: 1 } });
    return { col, dispose: () => col.close() };
  }));

describe("document filters: MongoDB", function () {
  let url = "";
  before(async function () {
    url = await requireMongo(this);
  });
  filterSuite("MongoDB", async () => {
    const db = await mongoDb(url, `filters_${Date.now().toString(36)}_${randomBytes(3).toString("hex")}_${serial++}`);
    return { col: mongoCollection<Doc>(db, "things"), dispose: async () => void (await db.dropDatabase()) };
  });
});
