// Embedded driver: one append-only NeDB datafile per collection (or memory
// only). NeDB runs every operation through one queue, so a conditional
// update is atomic with respect to the others, like a single-document write
// in MongoDB.
import { closeSync, openSync, writeSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { dirname } from "node:path";
import { createRequire } from "node:module";
import type * as NedbModule from "@seald-io/nedb";
import { DuplicateKeyError, type DocumentCollection, type Filter, type FindOptions, type Update } from "./collection.js";

// The package is CommonJS (module.exports = class) while its typings declare
// a default export; loading it with require keeps both sides honest.
const require = createRequire(import.meta.url);
const Datastore = require("@seald-io/nedb") as typeof NedbModule.default.default;
const { serialize } = require("@seald-io/nedb/lib/model.js") as { serialize(doc: unknown): string };

export interface NedbCollectionOptions {
  /** Datafile path; its directory is created. Omit for a memory-only collection. */
  filename?: string;
  /** Rewrites the append-only datafile this often; off when omitted. */
  compactEveryMs?: number;
}

const isUniqueViolation = (e: unknown): e is { key: unknown } => (e as { errorType?: string })?.errorType === "uniqueViolated";

export async function openNedbCollection<D extends { _id: string }>(opts: NedbCollectionOptions = {}): Promise<DocumentCollection<D>> {
  if (opts.filename) await mkdir(dirname(opts.filename), { recursive: true });
  const db = new Datastore<D>(opts.filename ? { filename: opts.filename } : { inMemoryOnly: true });
  await db.loadDatabaseAsync();
  const journal = opts.filename ? keepDatafileOpen(db, opts.filename) : undefined;
  if (opts.filename && opts.compactEveryMs) db.setAutocompactionInterval(opts.compactEveryMs);
  const uniqueFields = ["_id"];

  /** NeDB's error carries only the clashing value; find the unique field of `doc` holding it. */
  async function clashingField(e: { key: unknown }, doc: Record<string, unknown>): Promise<string | undefined> {
    // The _id index is checked first, so an _id equal to the key only counts when it is really taken.
    if (doc._id === e.key && (await db.findOneAsync({ _id: e.key } as never))) return "_id";
    return uniqueFields.find((f) => f !== "_id" && doc[f] === e.key);
  }

  const rethrow = async (e: unknown, doc: Record<string, unknown>): Promise<never> => {
    if (isUniqueViolation(e)) throw new DuplicateKeyError(await clashingField(e, doc));
    throw e;
  };

  const update = async (filter: Filter, upd: Update, multi: boolean) => {
    try {
      return await db.updateAsync(filter, upd, { multi, returnUpdatedDocs: !multi });
    } catch (e) {
      return rethrow(e, (upd.$set ?? {}) as Record<string, unknown>);
    }
  };

  return {
    async insertOne(doc) {
      try {
        await db.insertAsync(doc);
      } catch (e) {
        await rethrow(e, doc);
      }
    },
    findOne: async (filter) => (await db.findOneAsync(filter)) as D | null,
    async find(filter, o: FindOptions = {}) {
      let cursor = db.findAsync(filter, o.projection ?? {});
      if (o.sort) cursor = cursor.sort(o.sort);
      if (o.skip) cursor = cursor.skip(o.skip);
      if (o.limit !== undefined) cursor = cursor.limit(o.limit);
      return (await cursor) as D[];
    },
    count: async (filter) => Number(await db.countAsync(filter)),
    // One pass over the documents instead of one count (a scan without an index) per value.
    async countBy(field) {
      const counts = new Map<unknown, number>();
      for (const d of (await db.findAsync({ [field]: { $exists: true } } as never, { [field]: 1, _id: 0 } as never)) as Array<Record<string, unknown>>) {
        const v = d[field];
        counts.set(v, (counts.get(v) ?? 0) + 1);
      }
      return counts;
    },
    async updateOne(filter, upd) {
      const r = await update(filter, upd, false);
      // NeDB counts matched documents and does not say whether they changed.
      return { matched: r.numAffected, modified: r.numAffected };
    },
    async findOneAndUpdate(filter, upd) {
      const r = await update(filter, upd, false);
      const d = r.affectedDocuments as unknown as D | null;
      return r.numAffected === 1 && d ? d : null;
    },
    async updateMany(filter, upd) {
      const r = await update(filter, upd, true);
      return { matched: r.numAffected, modified: r.numAffected };
    },
    async upsertOne(key, upd) {
      // NeDB builds the new document from the query's plain values and the modifiers, as MongoDB does.
      await db.updateAsync(key, upd, { upsert: true });
    },
    deleteMany: async (filter) => db.removeAsync(filter, { multi: true }),
    async ensureIndex(spec, o = {}) {
      const fieldName = Object.keys(spec.keys)[0];
      if (!fieldName || fieldName === "_id") return;
      await db.ensureIndexAsync({ fieldName, unique: o.unique ?? false, sparse: o.sparse ?? false });
      if (o.unique && !uniqueFields.includes(fieldName)) uniqueFields.push(fieldName);
    },
    async close() {
      db.stopAutocompaction();
      // Rewrites the file without superseded lines so it does not keep growing.
      if (opts.filename) await db.compactDatafileAsync();
      await journal?.close();
    },
  };
}

/**
 * NeDB appends every write with fs.appendFile, which opens and closes the
 * datafile each time: a third of the CPU of a create in the embedded default
 * went to open/close (bench/README.md, round 4). The same lines are appended
 * here to a descriptor kept open, with a synchronous write: a few hundred
 * bytes into the page cache take microseconds, less than the thread-pool
 * round trip and promise of an asynchronous write (which cost 38 µs of main-
 * thread time per write in the profile). Each write still resolves only once
 * its lines are written. Compaction replaces the file, so the descriptor is
 * dropped then and reopened by the next write.
 */
function keepDatafileOpen(db: InstanceType<typeof Datastore>, filename: string): { close(): Promise<void> } {
  const persistence = (db as unknown as { persistence: { persistNewStateAsync?: (docs: unknown[]) => Promise<void> } }).persistence;
  // A NeDB release without this hook would otherwise silently stop persisting through us.
  if (typeof persistence.persistNewStateAsync !== "function") throw new Error("@seald-io/nedb: Persistence#persistNewStateAsync is missing; check the pinned version");
  let fd: number | undefined;
  const drop = () => {
    if (fd === undefined) return;
    const was = fd;
    fd = undefined;
    closeSync(was);
  };
  db.on("compaction.done", drop);
  persistence.persistNewStateAsync = async (docs) => {
    let lines = "";
    for (const doc of docs) lines += `${serialize(doc)}\n`;
    if (lines.length === 0) return;
    fd ??= openSync(filename, "a", 0o644);
    const bytes = Buffer.from(lines, "utf8");
    for (let at = 0; at < bytes.length; ) at += writeSync(fd, bytes, at);
  };
  return { close: async () => drop() };
}
