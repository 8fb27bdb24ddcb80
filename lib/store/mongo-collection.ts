// Full-stack driver: a MongoDB collection. Conditional writes are
// single-document updates, atomic on the server, so no transaction is needed.
import { MongoBulkWriteError, MongoError, MongoServerError, type Collection, type Db, type Document, type WriteError } from "mongodb";
import { groupCommit } from "../group-commit.js";
import { DuplicateKeyError, type DocumentCollection, type Filter, type FindOptions, type Update } from "./collection.js";
import { StorageError } from "./errors.js";

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

  async function guarded<T>(write: () => Promise<T>): Promise<T> {
    try {
      return await write();
    } catch (e) {
      if (e instanceof MongoServerError && e.code === 11000) throw new DuplicateKeyError(clashingField(e));
      throw driverFailure(e, name);
    }
  }
  const read = <T>(op: () => Promise<T>) => translated(name, op);

  return {
    async insertOne(doc) {
      const failure = await translated(name, () => insertGrouped("", doc as Document));
      if (failure) throw failure;
    },
    findOne: (filter) => read(async () => (await col.findOne(filter)) as D | null),
    find(filter, o: FindOptions = {}) {
      let cursor = col.find(filter, o.projection ? { projection: o.projection } : {});
      if (o.sort) cursor = cursor.sort(o.sort);
      if (o.skip) cursor = cursor.skip(o.skip);
      if (o.limit !== undefined) cursor = cursor.limit(o.limit);
      return read(() => cursor.toArray() as unknown as Promise<D[]>);
    },
    count: (filter) => read(() => col.countDocuments(filter)),
    async countBy(field) {
      const groups = await read(() => col.aggregate<{ _id: unknown; n: number }>([{ $match: { [field]: { $exists: true } } }, { $group: { _id: `$${field}`, n: { $sum: 1 } } }]).toArray());
      return new Map(groups.map((g) => [g._id, g.n]));
    },
    async updateOne(filter, update: Update) {
      const r = await guarded(() => col.updateOne(filter, update));
      return { matched: r.matchedCount, modified: r.modifiedCount };
    },
    findOneAndUpdate: (filter: Filter, update: Update) =>
      guarded(() => col.findOneAndUpdate(filter, update, { returnDocument: "after" })) as Promise<D | null>,
    async updateMany(filter, update) {
      const r = await guarded(() => col.updateMany(filter, update));
      return { matched: r.matchedCount, modified: r.modifiedCount };
    },
    async bulkUpdate(ops) {
      const r = await guarded(() => col.bulkWrite(ops.map((o) => ({ updateOne: { filter: o.filter, update: o.update } })), { ordered: false }));
      return { matched: r.matchedCount };
    },
    async upsertOne(key, update) {
      await guarded(() => col.updateOne(key, update, { upsert: true }));
    },
    deleteMany: async (filter) => (await guarded(() => col.deleteMany(filter))).deletedCount,
    async ensureIndex(spec, o = {}) {
      const options: Record<string, unknown> = { name: spec.name };
      if (o.unique) options.unique = true;
      if (o.sparse) options.sparse = true;
      // A no-op when the index already exists with the same spec, so replicas can open concurrently.
      await col.createIndex(spec.keys, options);
      if (o.unique) uniqueKeys.push({ name: spec.name, field: Object.keys(spec.keys)[0] });
    },
    async close() {},
  };
}
