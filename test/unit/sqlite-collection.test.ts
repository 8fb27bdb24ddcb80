// The embedded SQLite driver (lib/store/sqlite-collection.ts): a resolved
// write is on disk (also when the process dies right after), writes of one
// turn share a commit without one refused write undoing the others, failed
// writes change nothing, the main queries run on indexes, and tallies stay
// exact under concurrent writes.
import { expect } from "chai";
import { execFile } from "node:child_process";
import { statSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { createRequire } from "node:module";
import { sqlitePackageFor } from "../../lib/store/sqlite-binding.js";
import { fileURLToPath } from "node:url";
import { DuplicateKeyError, type DocumentCollection } from "../../lib/store/collection.js";
import { openSqliteDatabase, type SqliteDatabase } from "../../lib/store/sqlite-collection.js";
import { mongoLayout, embeddedLayout } from "../../services/articles/store/layout.js";
import { openArticleStoreOn } from "../../services/articles/store/store.js";
import { openStatsStoreOn } from "../../services/articles/stats/store.js";
import { openAuthStoreOn } from "../../services/auth/store/store.js";

type Doc = { _id: string; n: number; key?: string; status?: string; projectId?: string; added?: number; when?: Date; tags?: string[] };

const run = promisify(execFile);
const sqlitePackage = () => createRequire(import.meta.url).resolve(sqlitePackageFor());
const driver = fileURLToPath(new URL("../../lib/store/sqlite-collection.ts", import.meta.url));

async function refusal(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (e) {
    return e as Error;
  }
  throw new Error("the write succeeded");
}

describe("SQLite collection", function () {
  this.timeout(60_000);
  let dir: string;
  let db: SqliteDatabase | undefined;
  beforeEach(async () => (dir = await mkdtemp(path.join(os.tmpdir(), "sqlite-col-"))));
  afterEach(async () => {
    await db?.close();
    db = undefined;
    await rm(dir, { recursive: true, force: true });
  });

  it("has every resolved write on disk when the process is killed right after", async () => {
    const filename = path.join(dir, "things", "things.sqlite");
    // A separate process that writes, reports, and is killed before it could close anything.
    const script = `
      const { openSqliteDatabase } = await import(${JSON.stringify(driver)});
      const db = await openSqliteDatabase({ filename: ${JSON.stringify(filename)}, what: "things" });
      const col = db.collection("things");
      await Promise.all(Array.from({ length: 50 }, (_, i) => col.insertOne({ _id: "d" + i, n: i })));
      await col.updateOne({ _id: "d0" }, { $set: { n: 100 } });
      await col.deleteMany({ _id: "d1" });
      process.stdout.write("acknowledged");
      process.kill(process.pid, "SIGKILL");`;
    const out = await run(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { cwd: path.dirname(driver) }).catch((e: { stdout: string }) => e);
    expect(out.stdout).to.equal("acknowledged");
    db = await openSqliteDatabase({ filename, what: "things" });
    const col = db.collection<Doc>("things");
    expect(await col.count({})).to.equal(49);
    expect(await col.findOne({ _id: "d0" })).to.deep.equal({ _id: "d0", n: 100 });
    expect(await col.findOne({ _id: "d1" })).to.equal(null);
  });

  it("commits the writes of one turn together, and one refused write undoes none of the others", async () => {
    db = await openSqliteDatabase({ filename: path.join(dir, "g.sqlite"), what: "things" });
    const col = db.collection<Doc>("things");
    await col.ensureIndex({ name: "key_unique", keys: { key: 1 } }, { unique: true, sparse: true });
    await col.insertOne({ _id: "taken", n: 0, key: "k-taken" });
    const before = db.commits;
    const writes = Array.from({ length: 300 }, (_, i) => col.insertOne({ _id: `d${i}`, n: i, key: i === 150 ? "k-taken" : `k${i}` }));
    writes.push(col.updateOne({ _id: "taken" }, { $inc: { n: 1 } }).then(() => undefined));
    const settled = await Promise.allSettled(writes);
    expect(db.commits - before).to.be.at.most(2);
    const refused = settled.flatMap((s, i) => (s.status === "rejected" ? [[i, s.reason]] : []));
    expect(refused).to.have.length(1);
    expect(refused[0][0]).to.equal(150);
    expect(refused[0][1]).to.be.instanceOf(DuplicateKeyError).and.include({ field: "key" });
    expect(await col.count({})).to.equal(300);
    expect(await col.findOne({ _id: "d150" })).to.equal(null);
    expect(await col.findOne({ _id: "taken" })).to.include({ n: 1 });
  });

  it("undoes all of a group's first write when it is refused part-way, and keeps the writes after it", async () => {
    db = await openSqliteDatabase({ filename: path.join(dir, "f.sqlite"), what: "things" });
    const col = db.collection<Doc>("things");
    await col.ensureIndex({ name: "key_unique", keys: { key: 1 } }, { unique: true, sparse: true });
    await Promise.all([col.insertOne({ _id: "a", n: 1, key: "ka" }), col.insertOne({ _id: "b", n: 2, key: "kb" })]);
    const before = db.commits;
    // One turn: the first write changes "a", then refuses on "b" (the key is taken by then); the second runs after it.
    const first = col.updateMany({}, { $set: { key: "same" } });
    const second = col.insertOne({ _id: "c", n: 3, key: "kc" });
    const third = col.insertOne({ _id: "d", n: 4, key: "ka" });
    const [f, s2, t] = await Promise.allSettled([first, second, third]);
    expect(db.commits - before).to.equal(1);
    expect(f.status).to.equal("rejected");
    expect((f as PromiseRejectedResult).reason).to.be.instanceOf(DuplicateKeyError);
    expect(s2.status).to.equal("fulfilled");
    // "ka" is still taken: the first write's change to "a" was undone with it.
    expect(t.status).to.equal("rejected");
    expect(await col.find({}, { sort: { _id: 1 } })).to.deep.equal([
      { _id: "a", n: 1, key: "ka" },
      { _id: "b", n: 2, key: "kb" },
      { _id: "c", n: 3, key: "kc" },
    ]);
  });

  it("shows a write to reads only once it is on disk, while the next writes already build on it", async () => {
    db = await openSqliteDatabase({ filename: path.join(dir, "r.sqlite"), what: "things" });
    const col = db.collection<Doc>("things");
    const commits = db.commits;
    let answered = false;
    const write = col.insertOne({ _id: "x", n: 1 }).then(() => (answered = true));
    // Queued after the write's group: runs right after its commit, before the log's sync can report back.
    const early = await new Promise<{ committed: boolean; seen: Doc | null; count: number; update: Promise<unknown> }>((resolve) =>
      setImmediate(async () => {
        const committed = db!.commits > commits;
        const update = col.updateOne({ _id: "x" }, { $inc: { n: 1 } });
        resolve({ committed, seen: await col.findOne({ _id: "x" }), count: await col.count({}), update });
      }),
    );
    expect(early.committed).to.equal(true);
    expect(answered).to.equal(false);
    expect(early.seen).to.equal(null);
    expect(early.count).to.equal(0);
    await write;
    expect(await early.update).to.deep.equal({ matched: 1, modified: 1 });
    expect(await col.findOne({ _id: "x" })).to.deep.equal({ _id: "x", n: 2 });
  });

  it("grows a collection's changes once reads can see a write, for every kind of write, and only its own", async () => {
    for (const filename of [path.join(dir, "c.sqlite"), undefined]) {
      db = await openSqliteDatabase({ filename, what: "things" });
      const col = db.collection<Doc>("things");
      const other = db.collection<Doc>("others");
      const writes: Array<[string, () => Promise<unknown>]> = [
        ["insertOne", () => col.insertOne({ _id: "a", n: 1 })],
        ["updateOne", () => col.updateOne({ _id: "a" }, { $inc: { n: 1 } })],
        ["findOneAndUpdate", () => col.findOneAndUpdate({ _id: "a" }, { $inc: { n: 1 } })],
        ["findOneAndUpdate, not durable", () => col.findOneAndUpdate({ _id: "a" }, { $inc: { n: 1 } }, { durable: false })],
        ["updateMany", () => col.updateMany({}, { $inc: { n: 1 } })],
        ["bulkUpdate", () => col.bulkUpdate([{ filter: { _id: "a" }, update: { $inc: { n: 1 } } }])],
        ["upsertOne", () => col.upsertOne({ _id: "b" }, { $set: { n: 9 } })],
        ["deleteMany", () => col.deleteMany({ _id: "b" })],
      ];
      for (const [what, write] of writes) {
        const otherBefore = other.changes!();
        // Reads at one value see the same data: what was read at an unchanged value is current.
        const look = async () => ({ value: col.changes!(), data: JSON.stringify(await col.find({})) });
        const before = await look();
        const pending = write();
        // Right after the group's commit, before the log's sync lets plain reads see it.
        await new Promise((r) => setImmediate(r));
        const between = await look();
        await pending;
        const after = await look();
        const label = `${what}${filename ? "" : " (in memory)"}`;
        expect(after.value, label).to.be.above(before.value);
        for (const [x, y] of [[before, between], [between, after], [before, after]]) if (x.value === y.value) expect(y.data, label).to.equal(x.data);
        expect(other.changes!(), `${label}: another collection`).to.equal(otherBefore);
      }
      await db.close();
      db = undefined;
    }
  });

  it("keeps the write-ahead log bounded while writes keep coming", async () => {
    const filename = path.join(dir, "w.sqlite");
    db = await openSqliteDatabase({ filename, what: "things" });
    const col = db.collection<Doc>("things");
    const body = "y".repeat(1_000);
    let next = 0;
    let largest = 0;
    await Promise.all(
      Array.from({ length: 64 }, async () => {
        while (next < 25_000) {
          await col.insertOne({ _id: `d${next++}`, n: 0, key: body });
          largest = Math.max(largest, statSync(`${filename}-wal`).size);
        }
      }),
    );
    expect(await col.count({})).to.equal(25_000);
    // About 30 MB written; the log is checkpointed and written again from its start every 8 MB.
    expect(largest).to.be.below(12 * 2 ** 20);
  });

  it("changes nothing on a refused write: a taken unique key or _id, an update it cannot apply", async () => {
    db = await openSqliteDatabase({ what: "things" });
    const col = db.collection<Doc>("things");
    await col.ensureIndex({ name: "key_unique", keys: { key: 1 } }, { unique: true, sparse: true });
    await col.insertOne({ _id: "a", n: 1, key: "ka" });
    await col.insertOne({ _id: "b", n: 2, key: "kb" });
    expect(await refusal(col.insertOne({ _id: "a", n: 9 }))).to.be.instanceOf(DuplicateKeyError).and.include({ field: "_id" });
    expect(await refusal(col.updateOne({ _id: "b" }, { $set: { key: "ka", n: 5 } }))).to.be.instanceOf(DuplicateKeyError).and.include({ field: "key" });
    // A many-document update refused halfway is undone whole.
    expect(await refusal(col.updateMany({}, { $set: { key: "same" } }))).to.be.instanceOf(DuplicateKeyError);
    expect(await refusal(col.updateOne({ _id: "a" }, { $inc: { key: 1 } }))).to.match(/\$inc needs numbers/);
    expect(await col.find({}, { sort: { _id: 1 } })).to.deep.equal([
      { _id: "a", n: 1, key: "ka" },
      { _id: "b", n: 2, key: "kb" },
    ]);
  });

  it("keeps dates as dates, ordered and compared in time", async () => {
    db = await openSqliteDatabase({ what: "things" });
    const col = db.collection<Doc>("things");
    await col.ensureIndex({ name: "when", keys: { when: 1 } });
    const t = (s: string) => new Date(`2024-01-0${s}T00:00:00.000Z`);
    for (const [id, d] of [["c", "3"], ["a", "1"], ["b", "2"]] as const) await col.insertOne({ _id: id, n: 0, when: t(d) });
    const found = await col.find({ when: { $gte: t("2") } }, { sort: { when: -1 } });
    expect(found.map((d) => d._id)).to.deep.equal(["c", "b"]);
    expect(found[0].when).to.be.instanceOf(Date).and.deep.equal(t("3"));
    const after = await col.findOneAndUpdate({ _id: "a" }, { $set: { when: t("9") } });
    expect(after?.when).to.deep.equal(t("9"));
  });

  it("answers the main queries from indexes, deep pages from the index alone", async () => {
    db = await openSqliteDatabase({ what: "articles" });
    const col = db.collection<Doc>("articles");
    for (const [spec, o] of mongoLayout.indexes) await col.ensureIndex(spec, o);
    const listing = { sort: { added: -1 as const, _id: -1 as const }, limit: 20 };
    const plan = (f: Record<string, unknown>, o = {}) => db!.plan("articles", f, o).join(" | ");
    expect(plan({ _id: "x" })).to.match(/USING INDEX sqlite_autoindex/);
    expect(plan({ projectId: "p", deleted: false }, listing)).to.match(/USING INDEX c_articles__project_listing/).and.not.match(/TEMP B-TREE/);
    expect(plan({ projectId: "p", deleted: false }, { ...listing, skip: 999_900 })).to.match(/USING COVERING INDEX c_articles__project_listing/).and.not.match(/TEMP B-TREE/);
    expect(plan({ projectId: "p", status: "ready" }, listing)).to.match(/USING INDEX c_articles__project_ready/).and.not.match(/TEMP B-TREE/);
    expect(plan({ externalId: "e" })).to.match(/USING INDEX c_articles__externalId_unique/);
    expect(plan({ projectId: "p", url: { $in: ["a", "b"] } })).to.match(/USING INDEX c_articles__project_url/);
    expect(plan({ status: { $in: ["waiting", "errored"] }, updatedAt: { $lt: new Date() } })).to.match(/USING INDEX c_articles__status_updatedAt/);
  });

  it("answers the embedded stores' lookups from the indexes they create", async () => {
    db = await openSqliteDatabase({ what: "stores" });
    const d = db;
    await openAuthStoreOn({ projects: d.collection("projects"), tokens: d.collection("tokens"), oembedClaims: d.collection("oembed_claims") });
    await openStatsStoreOn(d.collection("listening_stats"));
    await openArticleStoreOn(d.collection("articles"), embeddedLayout, d.collection("pronunciations"));
    const plan = (c: string, f: Record<string, unknown>, o = {}) => d.plan(c, f, o).join(" | ");
    expect(plan("tokens", { hash: "h" })).to.match(/USING INDEX c_tokens__hash_unique/);
    expect(plan("tokens", { projectId: "p" }, { sort: { created: 1, _id: 1 } })).to.match(/USING INDEX c_tokens__project_created/);
    expect(plan("projects", { publicKey: "k" })).to.match(/USING INDEX c_projects__publicKey_unique/);
    expect(plan("oembed_claims", { verifiedHost: "h" })).to.match(/USING INDEX c_oembed_claims__verifiedHost_unique/);
    expect(plan("oembed_claims", { nextCheckMs: { $lte: 5 } }, { sort: { nextCheckMs: 1 }, limit: 10 })).to.match(/USING INDEX c_oembed_claims__nextCheck/).and.not.match(/TEMP B-TREE/);
    expect(plan("listening_stats", { projectId: "p", day: { $gte: "2024-01-01", $lte: "2024-01-31" }, articleId: "a" })).to.match(/USING INDEX c_listening_stats__project_article_day \(<expr>=\? AND <expr>=\? AND <expr>>\? AND <expr><\?\)/);
    expect(plan("listening_stats", { day: { $gte: "2024-01-01", $lte: "2024-01-31" }, projectId: "p" })).to.match(/USING INDEX c_listening_stats__project_day \(<expr>=\? AND <expr>>\? AND <expr><\?\)/);
    expect(plan("articles", { projectId: "p", externalId: "e" })).to.match(/USING INDEX c_articles__externalId_unique/);
    expect(plan("articles", { projectId: "p", _id: "a" })).to.match(/USING INDEX sqlite_autoindex_c_articles/);
    // The lists (store.ts list) in the list order (order.ts): all through project_order; by status through
    // project_status_order; by label, alone or with a status, through the multikey indexes' entry tables,
    // a deep page too, never a sort of their own.
    const listing = { sort: { sortAt: -1 as const, seq: -1 as const }, limit: 20 };
    expect(plan("articles", { projectId: "p", deleted: false }, { ...listing, skip: 5_000 })).to.match(/USING COVERING INDEX c_articles__project_order /).and.not.match(/TEMP B-TREE/);
    expect(plan("articles", { projectId: "p", status: "errored" }, { ...listing, skip: 5_000 })).to.match(/USING COVERING INDEX c_articles__project_status_order /).and.not.match(/TEMP B-TREE/);
    for (const skip of [0, 5_000]) {
      expect(plan("articles", { projectId: "p", deleted: false, labels: "news" }, { ...listing, skip })).to.match(/c_articles__project_order_label__entries USING PRIMARY KEY/).and.not.match(/TEMP B-TREE/);
      expect(plan("articles", { projectId: "p", status: "waiting", labels: "news" }, { ...listing, skip })).to.match(/c_articles__project_status_order_label__entries USING PRIMARY KEY/).and.not.match(/TEMP B-TREE/);
    }
  });

  it("keeps a multikey index's entries with every write, builds them once for documents already stored, and pages through them", async () => {
    db = await openSqliteDatabase({ what: "things" });
    const col = db.collection<Doc>("things");
    // Stored before the index exists (an upgraded database).
    await col.insertOne({ _id: "a", n: 1, projectId: "p", added: 1, tags: ["x", "y", "x"] });
    await col.insertOne({ _id: "b", n: 2, projectId: "p", added: 2, tags: ["y"] });
    await col.ensureIndex({ name: "project_tag", keys: { projectId: 1, tags: 1, added: -1, _id: -1 } }, { multikey: "tags" });
    await col.insertOne({ _id: "c", n: 3, projectId: "p", added: 3, tags: ["x"] });
    await col.insertOne({ _id: "d", n: 4, projectId: "q", added: 4, tags: ["x"] });
    const ids = async (tag: string, skip = 0, limit = 10) => (await col.find({ projectId: "p", tags: tag }, { sort: { added: -1, _id: -1 }, skip, limit })).map((d) => d._id);
    expect(await ids("x")).to.deep.equal(["c", "a"]);
    expect(await ids("y")).to.deep.equal(["b", "a"]);
    expect(await ids("y", 1, 1)).to.deep.equal(["a"]);
    await col.updateOne({ _id: "a" }, { $set: { tags: ["z"] } });
    await col.updateOne({ _id: "b" }, { $set: { added: 9 } });
    await col.updateOne({ _id: "c" }, { $set: { projectId: "q" } });
    expect(await ids("x")).to.deep.equal([]);
    expect(await ids("y")).to.deep.equal(["b"]);
    expect(await ids("z")).to.deep.equal(["a"]);
    await col.deleteMany({ _id: "a" });
    expect(await ids("z")).to.deep.equal([]);
    // The documents come back whole, and a filter the entries cannot answer still goes to the documents.
    expect((await col.find({ projectId: "q", tags: "x" }, { sort: { added: -1, _id: -1 } })).map((d) => d.n)).to.deep.equal([4, 3]);
    expect((await col.find({ projectId: "q", tags: "x", n: { $gt: 3 } })).map((d) => d._id)).to.deep.equal(["d"]);
  });

  it("walks the due index for the reconciler's pass, not the status index, when most articles are parked", async () => {
    db = await openSqliteDatabase({ what: "articles" });
    const d = db;
    const raw = d.collection<Doc & Record<string, unknown>>("articles");
    // The store's own queries, as it sends them, explained afterwards.
    const sent: Array<[Record<string, unknown>, Record<string, unknown>]> = [];
    const watched = new Proxy(raw, {
      get: (target, key) =>
        key === "find"
          ? (f: Record<string, unknown>, o: Record<string, unknown> = {}) => (sent.push([f, o]), target.find(f, o))
          : Reflect.get(target, key),
    });
    const store = await openArticleStoreOn(watched as never, embeddedLayout, d.collection("pronunciations"));
    // An archive imported on demand: waiting articles without a due time, and two that are due.
    const base = { projectId: "p", title: "t", text: "x", isRaw: false, parse: false, voice: "alloy", lang: "en-US", types: [], labels: [], revision: 1, updated: null, errors: [], deleted: false };
    await Promise.all(Array.from({ length: 3_000 }, (_, i) => raw.insertOne({ _id: `parked-${i}`, n: i, ...base, status: "waiting", added: i, changedAt: i, parked: true })));
    await Promise.all([1, 2].map((i) => raw.insertOne({ _id: `due-${i}`, n: i, ...base, status: "waiting", added: i, changedAt: i, dueAt: i })));
    sent.length = 0;
    expect((await store.findStale(["waiting"], Date.now())).map((a) => a.id)).to.deep.equal(["due-1", "due-2"]);
    expect(sent).to.have.length(1);
    const plan = d.plan("articles", sent[0][0], sent[0][1]).join(" | ");
    expect(plan).to.match(/USING INDEX c_articles__due/).and.not.match(/TEMP B-TREE/);
  });

  it("keeps an index opened again with the same keys, and rebuilds one whose keys changed", async () => {
    const filename = path.join(dir, "i.sqlite");
    db = await openSqliteDatabase({ filename, what: "things" });
    const col = db.collection<Doc>("things");
    await col.ensureIndex({ name: "listing", keys: { projectId: 1, added: -1 } });
    await col.ensureIndex({ name: "listing", keys: { projectId: 1, added: -1 } });
    expect(db.plan("things", { projectId: "p" }, { sort: { added: -1 } }).join()).to.match(/USING INDEX c_things__listing/).and.not.match(/TEMP B-TREE/);
    await col.ensureIndex({ name: "listing", keys: { projectId: 1, status: 1, added: -1 } });
    expect(db.plan("things", { projectId: "p", status: "ready" }, { sort: { added: -1 } }).join()).to.match(/USING INDEX c_things__listing \(<expr>=\? AND <expr>=\?\)/).and.not.match(/TEMP B-TREE/);
    await col.close();
  });

  it("keeps packed fields deflated beside the JSON, gives them back whole, and rewrites rows of a release before packing", async () => {
    const filename = path.join(dir, "p.sqlite");
    type Article = { _id: string; status: string; text?: string; note?: string };
    const prose = "The council met on Tuesday to discuss the new bridge, and the mayor said work would start in spring. ".repeat(12);
    // A row as the release before packing wrote it: the text in the JSON, no packed column.
    db = await openSqliteDatabase({ filename, what: "things" });
    await db.collection<Article>("docs").insertOne({ _id: "old", status: "ready", text: prose });
    await db.close();
    const { default: Database } = await import(sqlitePackage());
    const raw = new Database(filename);
    raw.exec(`UPDATE c_docs SET z = NULL`);
    raw.close();

    db = await openSqliteDatabase({ filename, what: "things" });
    const col = db.collection<Article>("docs", { packed: ["text"] });
    await col.insertOne({ _id: "new", status: "ready", text: prose, note: "n" });
    expect(await col.findOne({ _id: "new" })).to.deep.equal({ _id: "new", status: "ready", text: prose, note: "n" });
    expect(await col.findOne({ _id: "old" })).to.deep.equal({ _id: "old", status: "ready", text: prose });
    // A find that leaves the text out does not read it; one with it reads both kinds of row.
    expect((await col.find({ status: "ready" }, { sort: { _id: 1 }, omit: ["text"] })).map((d) => d.text)).to.deep.equal([undefined, undefined]);
    expect((await col.find({ status: "ready" }, { sort: { _id: 1 } })).map((d) => d.text)).to.deep.equal([prose, prose]);
    // A status change keeps the text; the old row is packed when it is written again.
    expect(await col.findOneAndUpdate({ _id: "old" }, { $set: { status: "deleted" } })).to.deep.equal({ _id: "old", status: "deleted", text: prose });
    expect(await col.findOneAndUpdate({ _id: "new" }, { $set: { text: "short" } })).to.deep.equal({ _id: "new", status: "ready", text: "short", note: "n" });
    // Read before (its inflated text kept for reads again), written since: read as written.
    expect((await col.findOne({ _id: "new" }))?.text).to.equal("short");
    expect((await col.find({ _id: { $in: ["new"] } }))[0].text).to.equal("short");
    // A filter on a packed field would silently match nothing in SQL: it is refused.
    expect((await refusal(col.find({ text: "short" }))).message).to.match(/packed field/);

    const check = new Database(filename, { readonly: true });
    const rows = check.prepare("SELECT _id, doc, length(z) AS zBytes FROM c_docs ORDER BY _id").all() as Array<{ _id: string; doc: string; zBytes: number }>;
    check.close();
    for (const r of rows) expect(r.doc, r._id).not.to.include("council");
    expect(rows.find((r) => r._id === "old")!.zBytes).to.be.below(prose.length / 4);
  });

  it("pages deep through a large listing in order", async () => {
    db = await openSqliteDatabase({ what: "articles" });
    const col = db.collection<Doc>("articles");
    await col.ensureIndex({ name: "listing", keys: { projectId: 1, added: -1, _id: -1 } });
    await Promise.all(Array.from({ length: 2_000 }, (_, i) => col.insertOne({ _id: `a${String(i).padStart(5, "0")}`, n: i, projectId: i % 2 ? "p" : "q", added: Math.floor(i / 4) })));
    const all = await col.find({ projectId: "p" }, { sort: { added: -1, _id: -1 } });
    const page = await col.find({ projectId: "p" }, { sort: { added: -1, _id: -1 }, skip: 900, limit: 50 });
    expect(page).to.deep.equal(all.slice(900, 950));
    expect(await col.find({ projectId: "p" }, { sort: { added: -1, _id: -1 }, skip: 990, limit: 50 })).to.have.length(10);
  });

  describe("tallies", () => {
    const byStatus = { name: "status", groups: (d: Record<string, unknown>) => (typeof d.status === "string" ? [`${d.projectId}:${d.status}`, `${d.projectId}:*`] : []) };

    async function recount(col: DocumentCollection<Doc>): Promise<Map<string, number>> {
      const counts = new Map<string, number>();
      for (const d of await col.find({})) for (const g of byStatus.groups(d)) counts.set(g, (counts.get(g) ?? 0) + 1);
      return counts;
    }

    it("builds the counts once for documents already there, then keeps them exact under concurrent writes", async () => {
      const filename = path.join(dir, "t.sqlite");
      db = await openSqliteDatabase({ filename, what: "things" });
      let col = db.collection<Doc>("things");
      await Promise.all(Array.from({ length: 100 }, (_, i) => col.insertOne({ _id: `old${i}`, n: i, projectId: `p${i % 3}`, status: "waiting" })));
      await col.ensureTally!(byStatus);
      expect(await col.tallies!("status")).to.deep.equal(await recount(col));

      await col.ensureIndex({ name: "key_unique", keys: { key: 1 } }, { unique: true, sparse: true });
      const statuses = ["waiting", "processing", "ready", "errored"];
      const writes: Array<Promise<unknown>> = [];
      for (let i = 0; i < 600; i++) {
        const r = i % 6;
        if (r === 0) writes.push(col.insertOne({ _id: `new${i}`, n: i, projectId: `p${i % 3}`, status: statuses[i % 4], key: `k${Math.floor(i / 12)}` }));
        else if (r === 1) writes.push(col.updateOne({ _id: `old${i % 100}` }, { $set: { status: statuses[i % 4] } }));
        else if (r === 2) writes.push(col.updateMany({ projectId: `p${i % 3}`, status: "processing" }, { $set: { status: "ready" } }));
        else if (r === 3) writes.push(col.deleteMany({ _id: `new${i - 15}` }));
        else if (r === 4) writes.push(col.updateOne({ _id: `old${(i * 7) % 100}` }, { $unset: { status: true } }));
        else writes.push(col.upsertOne({ _id: `up${i % 40}` }, { $set: { projectId: "p9", status: statuses[i % 4] }, $inc: { n: 1 } }));
      }
      const settled = await Promise.allSettled(writes);
      expect(settled.filter((s) => s.status === "rejected").length, "some inserts are refused by the unique key").to.be.greaterThan(0);
      const expected = await recount(col);
      expect(await col.tallies!("status")).to.deep.equal(expected);
      expect(await col.tally!("status", "p9:*")).to.equal(20); // up1, up3, … up39
      expect(await col.tally!("status", "nobody:*")).to.equal(0);

      // Reopened (declared again): the counts are kept, not rebuilt or doubled.
      await col.close();
      await db.close();
      db = await openSqliteDatabase({ filename, what: "things" });
      col = db.collection<Doc>("things");
      await col.ensureTally!(byStatus);
      expect(await col.tallies!("status")).to.deep.equal(expected);
      await col.close();
    });
  });
});
