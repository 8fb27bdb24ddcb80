// Failed writes change nothing, on a real volume that fills up (a small
// tmpfs): the embedded collection's documents, unique indexes and database
// stay as they were, the error names the cause, and writes work again once
// space returns, without reopening anything.
import { expect } from "chai";
import path from "node:path";
import { StorageError, storageErrorFromFs, storageErrorFromSqlite } from "../../lib/store/errors.js";
import { MongoClient } from "mongodb";
import { mongoCollection } from "../../lib/store/mongo-collection.js";
import { openSqliteDatabase, type SqliteDatabase } from "../../lib/store/sqlite-collection.js";
import type { DocumentCollection } from "../../lib/store/collection.js";
import { requireMongo } from "../support/servers.js";
import { smallVolumeOrSkip, type SmallVolume } from "../support/tmpfs.js";

type Doc = { _id: string; key?: string; n: number; body?: string };
/** Larger than a page, so it cannot slip into the slack of the file's last one. */
const BIG = "x".repeat(16 * 1024);

async function failure(p: Promise<unknown>): Promise<StorageError> {
  try {
    await p;
  } catch (e) {
    expect(e).to.be.instanceOf(StorageError);
    return e as StorageError;
  }
  throw new Error("the write succeeded");
}

describe("embedded store on a failing volume", function () {
  this.timeout(60_000);
  let volume: SmallVolume;
  let file: string;
  let db: SqliteDatabase;
  let col: DocumentCollection<Doc>;

  async function open() {
    db = await openSqliteDatabase({ filename: file, what: "things" });
    col = db.collection<Doc>("things");
  }

  beforeEach(async function () {
    volume = smallVolumeOrSkip(this, 2 * 1024 * 1024);
    file = path.join(volume.dir, "things", "things.sqlite");
    await open();
    await col.ensureIndex({ name: "key_unique", keys: { key: 1 } }, { unique: true, sparse: true });
    await col.insertOne({ _id: "kept", key: "k0", n: 1 });
  });

  afterEach(async () => {
    if (!volume) return;
    volume.free();
    volume.readOnly(false);
    await col?.close();
    await db?.close();
    volume.unmount();
  });

  it("full: inserts and updates fail with 'full' and change nothing; space returning is enough to write again", async () => {
    volume.fill();
    const insert = await failure(col.insertOne({ _id: "phantom", key: "k1", n: 1, body: BIG }));
    expect(insert.failure).to.equal("full");
    expect(insert.message).to.equal("the things store's volume is full (SQLITE_FULL); nothing was written");
    expect(await col.findOne({ _id: "phantom" })).to.equal(null);
    expect(await col.count({})).to.equal(1);

    expect((await failure(col.updateOne({ _id: "kept" }, { $set: { n: 2, body: BIG } }))).failure).to.equal("full");
    expect(await col.findOne({ _id: "kept" })).to.deep.include({ n: 1, key: "k0" });
    // The index saw the rollback too: the old key still finds it, a new one does not.
    expect(await col.findOne({ key: "k0" })).to.not.equal(null);
    expect((await failure(col.findOneAndUpdate({ _id: "kept" }, { $set: { key: "k9", body: BIG } }))).failure).to.equal("full");
    expect(await col.findOne({ key: "k9" })).to.equal(null);

    volume.free();
    // The unique key the failed insert tried is free, and the write goes through now.
    await col.insertOne({ _id: "phantom", key: "k1", n: 1, body: BIG });
    await col.updateOne({ _id: "kept" }, { $set: { n: 3 } });

    // Reopened, the database holds exactly the acknowledged writes and is sound.
    await col.close();
    await db.close();
    await open();
    expect(await col.count({ key: "k9" })).to.equal(0);
    expect((await col.find({}, { sort: { _id: 1 } })).map((d) => [d._id, d.n])).to.deep.equal([
      ["kept", 3],
      ["phantom", 1],
    ]);
  });

  it("full: every write of a group fails at its commit and none is kept", async () => {
    volume.fill();
    const group = [col.insertOne({ _id: "g1", n: 1, body: BIG }), col.updateOne({ _id: "kept" }, { $set: { n: 5 } }), col.insertOne({ _id: "g2", n: 2, key: "k2" })];
    for (const p of group) expect((await failure(p)).failure).to.equal("full");
    expect(await col.find({}, { sort: { _id: 1 } })).to.deep.equal([{ _id: "kept", key: "k0", n: 1 }]);
    volume.free();
    await Promise.all([col.insertOne({ _id: "g2", n: 2, key: "k2" }), col.updateOne({ _id: "kept" }, { $set: { n: 5 } })]);
    expect(await col.count({})).to.equal(2);
  });

});

describe("storage failure causes", () => {
  // A tmpfs cannot be remounted read-only while the store holds its file open for writing, so
  // the read-only and I/O-error causes are checked at the mapping the append goes through.
  it("names the cause of each file-system failure", () => {
    const of = (code: string) => storageErrorFromFs(Object.assign(new Error(`${code}: /secret/path`), { code }), "things");
    expect([of("ENOSPC").failure, of("EDQUOT").failure, of("EROFS").failure, of("EACCES").failure, of("EIO").failure]).to.deep.equal([
      "full",
      "full",
      "read-only",
      "read-only",
      "unavailable",
    ]);
    expect(of("EROFS").message).to.equal("the things store's volume is not writable (EROFS); nothing was written");
    expect(of("EIO").message).to.not.include("/secret/path");
  });
});

describe("SQLite failure causes", () => {
  // The engine's own codes: a read-only volume, a moved file or an I/O error cannot be provoked on a tmpfs the store holds open.
  it("names the cause of each engine failure", () => {
    const of = (code: string) => storageErrorFromSqlite(Object.assign(new Error(`disk I/O error at /secret/path`), { code }), "things");
    expect(["SQLITE_FULL", "SQLITE_READONLY", "SQLITE_READONLY_DBMOVED", "SQLITE_IOERR_FSYNC", "SQLITE_CORRUPT"].map((c) => of(c).failure)).to.deep.equal([
      "full",
      "read-only",
      "read-only",
      "unavailable",
      "unavailable",
    ]);
    expect(of("SQLITE_READONLY").message).to.equal("the things store's volume is not writable (SQLITE_READONLY); nothing was written");
    expect(of("SQLITE_IOERR_FSYNC").message).to.not.include("/secret/path");
  });
});

describe("MongoDB driver failures", function () {
  this.timeout(60_000);

  it("become StorageError 'unavailable' (503 at the gateway), reads and writes alike, without the driver's text", async function () {
    const url = await requireMongo(this);
    const client = new MongoClient(url, { serverSelectionTimeoutMS: 2_000 });
    await client.connect();
    const col = mongoCollection<Doc>(client.db(`store_failures_${process.pid}`), "things");
    await col.insertOne({ _id: "a", n: 1 });
    await client.close();
    for (const attempt of [() => col.findOne({ _id: "a" }), () => col.insertOne({ _id: "b", n: 1 }), () => col.updateOne({ _id: "a" }, { $set: { n: 2 } })]) {
      const err = await failure(attempt());
      expect(err.failure).to.equal("unavailable");
      expect(err.message).to.match(/^the database is unavailable \(Mongo\w+Error, collection things\)$/);
    }
  });
});
