// Full-stack driver: a MongoDB collection. Conditional writes are
// single-document updates, atomic on the server, so no transaction is needed.
import { MongoBulkWriteError, MongoError, MongoServerError, type Collection, type Db, type Document, type WriteError } from "mongodb";
import { groupCommit } from "../group-commit.js";
import { DuplicateKeyError, type DerivedFill, type DocumentCollection, type Filter, type FindOptions, type Update } from "./collection.js";
import { StorageError } from "./errors.js";
import { mongoTallies, NOT_A_COUNTER } from "./mongo-tally.js";

/**
 * How often the marks of counted writes are cleared (and a dead writer's documents settled),
 * and how old a mark must be for that: a writer still at work is not raced for nothing.
 */
const TALLY_SWEEP_EVERY_MS = 60_000;
const TALLY_SWEEP_AGE_MS = 60_000;

/** MongoDB's code for a server that could not write for lack of disk space. */
const OUT_OF_DISK_SPACE = 14031;

/**
 * Driver failures (server unreachable, not primary, timeouts, write errors)
 * become a StorageError, answered as 503 (507 for a full server disk) instead
 * of a generic 500; the driver's text, which can name hosts, stays in the log.
 */
function driverFailure(e: unknown, name: string): unknown {
  if (!(e instanceof MongoError)) return e;
  return storageFailure(e instanceof MongoServerError ? e.code : undefined, name, e.name, e);
}

function storageFailure(code: unknown, name: string, what: string, cause: unknown): StorageError {
  if (code === OUT_OF_DISK_SPACE) return new StorageError("full", `the database is out of disk space (collection ${name}); nothing was written`, { cause });
  return new StorageError("unavailable", `the database is unavailable (${what}, collection ${name})`, { cause });
}

async function translated<T>(name: string, op: () => Promise<T>): Promise<T> {
  try {
    return await op();
  } catch (e) {
    throw driverFailure(e, name);
  }
}

/** The Db comes from lib/mongo.ts; its shared client is closed by the process, not per collection. */
export function mongoCollection<D extends { _id: string }>(db: Db, name: string): DocumentCollection<D> {
  // The typed Filter/UpdateFilter of the driver cannot follow dotted paths and
  // operators built at run time; the port's loose types are checked by the stores' tests.
  const col = db.collection(name) as unknown as Collection<Document>;
  const uniqueKeys: Array<{ name: string; field: string }> = [{ name: "_id_", field: "_id" }];
  const tallies = mongoTallies(col);
  let sweeper: NodeJS.Timeout | undefined;
  /** A tallied collection holds its counters too: its own queries leave them out. */
  const own = (filter: Filter): Filter => (tallies.active ? { ...filter, ...NOT_A_COUNTER } : filter);

  /** Which unique index refused the write; older servers and look-alikes only say so in the message. */
  function clashingField(e: { keyPattern?: unknown; message: string }): string | undefined {
    const pattern = e.keyPattern as Record<string, unknown> | undefined;
    if (pattern) return Object.keys(pattern)[0];
    const named = uniqueKeys.find((k) => e.message.includes(`index: ${k.name}`));
    if (named) return named.field;
    return [...uniqueKeys].reverse().find((k) => e.message.includes(k.field))?.field;
  }

  /** One document's failure within a batch insert, as insertOne would have thrown it. */
  function itemFailure(w: WriteError): Error {
    const raw = (w as unknown as { err?: { keyPattern?: unknown } }).err;
    if (w.code === 11000) return new DuplicateKeyError(clashingField({ keyPattern: raw?.keyPattern, message: w.errmsg ?? "" }));
    return storageFailure(w.code, name, `write error ${w.code}`, w);
  }

  /**
   * Inserts that arrive while one is on its way go as one unordered insert
   * (lib/group-commit.ts): one command and one socket write for the lot, each
   * document still accepted or refused on its own.
   */
  const insertGrouped = groupCommit<string, Document, Error | undefined>(async (_, docs) => {
    if (tallies.active) return insertTallied(docs);
    if (docs.length === 1) {
      try {
        await guarded(() => col.insertOne(docs[0]));
        return [undefined];
      } catch (e) {
        if (e instanceof DuplicateKeyError) return [e];
        throw e;
      }
    }
    try {
      await col.insertMany(docs, { ordered: false });
      return docs.map(() => undefined);
    } catch (e) {
      // Write errors name their documents; anything else (network, write concern) failed the lot.
      if (!(e instanceof MongoBulkWriteError) || !e.writeErrors || (Array.isArray(e.writeErrors) && e.writeErrors.length === 0)) throw e;
      const failures: Array<Error | undefined> = docs.map(() => undefined);
      for (const w of Array.isArray(e.writeErrors) ? e.writeErrors : [e.writeErrors]) failures[w.index] = itemFailure(w);
      return failures;
    }
  }, { gatherTurn: true });

  async function insertTallied(docs: Document[]): Promise<Array<Error | undefined>> {
    return (await tallies.insertMany(docs)).map((w) => (w === "id" ? new DuplicateKeyError("_id") : w ? itemFailure(w) : undefined));
  }

  async function guarded<T>(write: () => Promise<T>): Promise<T> {
    try {
      return await write();
    } catch (e) {
      if (e instanceof MongoServerError && e.code === 11000) throw new DuplicateKeyError(clashingField(e));
      throw driverFailure(e, name);
    }
  }
  const read = <T>(op: () => Promise<T>) => translated(name, op);

  async function findOneAndUpdate(filter: Filter, update: Update): Promise<D | null> {
    const d = await guarded(() => col.findOneAndUpdate(filter, tallies.mark(update), { returnDocument: "after" }));
    if (tallies.active) await guarded(() => tallies.settle(d));
    return tallies.strip(d) as D | null;
  }

  return {
    async insertOne(doc) {
      const failure = await translated(name, () => insertGrouped("", doc as Document));
      if (failure) throw failure;
    },
    findOne: (filter) => read(async () => tallies.strip(await col.findOne(own(filter))) as D | null),
    find(filter, o: FindOptions = {}) {
      const projection = o.projection ?? (o.omit?.length ? Object.fromEntries(o.omit.map((f) => [f, 0])) : undefined);
      let cursor = col.find(own(filter), projection ? { projection } : {});
      if (o.sort) cursor = cursor.sort(o.sort);
      if (o.hint) cursor = cursor.hint(o.hint);
      if (o.skip) cursor = cursor.skip(o.skip);
      if (o.limit !== undefined) cursor = cursor.limit(o.limit);
      return read(async () => (await cursor.toArray()).map((d) => tallies.strip(d)) as unknown as D[]);
    },
    count: (filter) => read(() => col.countDocuments(own(filter))),
    async updateOne(filter, update: Update) {
      if (tallies.active) {
        const d = await findOneAndUpdate(filter, update);
        return { matched: d ? 1 : 0, modified: d ? 1 : 0 };
      }
      const r = await guarded(() => col.updateOne(filter, update));
      return { matched: r.matchedCount, modified: r.modifiedCount };
    },
    findOneAndUpdate: (filter: Filter, update: Update) => findOneAndUpdate(filter, update),
    async updateMany(filter, update) {
      if (tallies.active) {
        // One conditional write per document, each settling its own counts.
        let matched = 0;
        for (const { _id } of await read(() => col.find(own(filter), { projection: { _id: 1 } }).toArray())) {
          if (await findOneAndUpdate({ ...filter, _id }, update)) matched++;
        }
        return { matched, modified: matched };
      }
      const r = await guarded(() => col.updateMany(filter, update));
      return { matched: r.matchedCount, modified: r.modifiedCount };
    },
    async bulkUpdate(ops) {
      if (tallies.active && ops.some((o) => typeof o.filter._id !== "string")) throw new Error("bulkUpdate on a tallied collection needs an _id in every filter");
      const r = await guarded(() => col.bulkWrite(ops.map((o) => ({ updateOne: { filter: o.filter, update: tallies.mark(o.update) } })), { ordered: false }));
      if (tallies.active) {
        // The writes do not return their documents: read the ones that could have matched.
        const ids = [...new Set(ops.map((o) => o.filter._id as string))];
        const docs = await read(() => col.find({ _id: { $in: ids as never } }).toArray());
        for (const d of docs) await guarded(() => tallies.settle(d));
        return { matched: r.matchedCount, docs: docs.map((d) => tallies.strip(d)) as unknown as D[] };
      }
      return { matched: r.matchedCount };
    },
    async upsertOne(key, update) {
      if (tallies.active) {
        const d = await guarded(() => col.findOneAndUpdate(key, tallies.mark(update), { upsert: true, returnDocument: "after" }));
        await guarded(() => tallies.settle(d));
        return;
      }
      await guarded(() => col.updateOne(key, update, { upsert: true }));
    },
    async deleteMany(filter) {
      if (!tallies.active) return (await guarded(() => col.deleteMany(filter))).deletedCount;
      let n = 0;
      for (const { _id } of await read(() => col.find(own(filter), { projection: { _id: 1 } }).toArray())) {
        if (await guarded(() => tallies.deleteOne(filter, _id))) n++;
      }
      return n;
    },
    async ensureTally(spec) {
      await guarded(() => tallies.ensure(spec));
      await guarded(() => col.createIndex({ _tallyOf: 1 }, { name: "tally_counters", sparse: true }));
      // The documents written lately that a tally reads (mongo-tally.ts): few, swept at start and in the background.
      await guarded(() => col.createIndex({ _tallyDirty: 1 }, { name: "tally_unsettled", sparse: true }));
      sweeper ??= setInterval(() => void tallies.sweep(TALLY_SWEEP_AGE_MS).catch(() => undefined), TALLY_SWEEP_EVERY_MS).unref();
    },
    tally: (tallyName, group) => read(() => tallies.count(tallyName, group)),
    tallies: (tallyName) => read(() => tallies.all(tallyName)),
    recount: () => guarded(() => tallies.recount()),
    settleTallies: () => guarded(() => tallies.sweep()),
    async ensureIndex(spec, o = {}) {
      const options: Record<string, unknown> = { name: spec.name };
      if (o.unique) options.unique = true;
      // MongoDB's own sparse keeps a compound index's document when it has any key (and every one has _id).
      const keys = Object.keys(spec.keys);
      if (o.sparse && keys.length > 1) options.partialFilterExpression = { [keys[0]]: { $exists: true } };
      else if (o.sparse) options.sparse = true;
      // A no-op when the index already exists with the same spec, so replicas can open concurrently.
      await col.createIndex(spec.keys, options);
      if (o.unique) uniqueKeys.push({ name: spec.name, field: Object.keys(spec.keys)[0] });
    },
    async fillDerived(spec: DerivedFill, page) {
      // A page of ids with the source fields, then one unordered bulk write. (A pipeline update would
      // compute them on the server, but look-alike servers the tests run refuse it; in the background either serves.)
      const fields = Object.entries(spec.fields);
      const projection = Object.fromEntries([...fields.map(([, { from }]) => [from, 1]), [spec.unless, 1]]);
      const docs = await read(() => col.find(own({ _id: { $gt: page.after } }), { projection }).sort({ _id: 1 }).limit(page.limit).toArray());
      if (docs.length === 0) return { modified: 0 };
      const ops = docs
        .filter((d) => d[spec.unless] === undefined && fields.every(([, { from }]) => typeof d[from] === "number"))
        .map((d) => ({
          updateOne: {
            filter: { _id: d._id, [spec.unless]: { $exists: false } },
            update: { $set: Object.fromEntries(fields.map(([f, { from, times }]) => [f, (d[from] as number) * times])) },
          },
        }));
      const modified = ops.length ? (await guarded(() => col.bulkWrite(ops, { ordered: false }))).modifiedCount : 0;
      return { last: docs[docs.length - 1]._id as unknown as string, modified };
    },
    async dropIndex(name) {
      try {
        await col.dropIndex(name);
      } catch (e) {
        // IndexNotFound, or NamespaceNotFound for a collection not made yet: nothing to drop.
        const code = (e as { code?: number }).code;
        if (code !== 27 && code !== 26 && !/index not found|ns not found/i.test((e as Error).message)) throw e;
      }
    },
    async close() {
      if (sweeper) clearInterval(sweeper);
      sweeper = undefined;
    },
  };
}
