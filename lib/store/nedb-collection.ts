// Embedded driver: one append-only NeDB datafile per collection (or memory
// only). NeDB runs every operation through one queue, so a conditional
// update is atomic with respect to the others, like a single-document write
// in MongoDB.
//
// NeDB changes its in-memory documents and indexes before it appends to the
// file; a failed append (full or read-only volume) would leave a phantom
// document that reads and unique indexes see until the next restart. Every
// write here runs as one queued task that records how to undo each index
// change and undoes them all if the append fails, so a failed write changes
// nothing. A write resolves only after the journal's group-committed
// fdatasync (journal.ts).
import { unlink } from "node:fs/promises";
import { mkdir } from "node:fs/promises";
import { dirname } from "node:path";
import { createRequire } from "node:module";
import type * as NedbModule from "@seald-io/nedb";
import { DuplicateKeyError, type DocumentCollection, type Filter, type FindOptions, type TallySpec, type Update } from "./collection.js";
import { AppendJournal } from "./journal.js";

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
  /** Names the store in error messages; default: the file's name. */
  what?: string;
  /** false: acknowledge writes without fdatasync (the benchmark's reference); default true. */
  durable?: boolean;
  /** Told when a periodic compaction fails (e.g. no space for the rewritten file); the datafile is untouched then. */
  onCompactionError?: (err: unknown) => void;
}

let durableByDefault = true;

/** For the benchmark's same-run reference only: collections opened from now on acknowledge writes before fdatasync. */
export function acknowledgeBeforeFsync(): void {
  durableByDefault = false;
}

const isUniqueViolation = (e: unknown): e is { key: unknown } => (e as { errorType?: string })?.errorType === "uniqueViolated";

type Doc = Record<string, unknown>;
type Modification = { oldDoc: Doc; newDoc: Doc };

/** The NeDB internals a write runs through (the public *Async methods queue these same functions). */
interface NedbInternals {
  executor: { pushAsync<T>(task: () => Promise<T>): Promise<T> };
  _insertAsync(doc: unknown): Promise<unknown>;
  _updateAsync(query: unknown, update: unknown, options: unknown): Promise<{ numAffected: number; affectedDocuments: unknown }>;
  _removeAsync(query: unknown, options: unknown): Promise<number>;
  _addToIndexes(doc: Doc): void;
  _removeFromIndexes(doc: Doc): void;
  _updateIndexes(oldDoc: Doc | Modification[], newDoc?: Doc): void;
  persistence: { persistNewStateAsync?: (docs: unknown[]) => Promise<void> };
}

export async function openNedbCollection<D extends { _id: string }>(opts: NedbCollectionOptions = {}): Promise<DocumentCollection<D>> {
  if (opts.filename) await mkdir(dirname(opts.filename), { recursive: true });
  const db = new Datastore<D>(opts.filename ? { filename: opts.filename } : { inMemoryOnly: true });
  await db.loadDatabaseAsync();
  const journal = opts.filename ? journalFor(db, opts.filename, { what: opts.what ?? opts.filename, durable: opts.durable ?? durableByDefault }) : undefined;
  const internals = db as unknown as NedbInternals;
  const write = transactional(internals, journal);
  const compaction = opts.filename && opts.compactEveryMs ? startCompaction(db, opts.filename, opts.compactEveryMs, opts.onCompactionError) : undefined;
  const uniqueFields = ["_id"];

  /** NeDB's error carries only the clashing value; find the unique field of `doc` holding it. */
  async function clashingField(e: { key: unknown }, doc: Record<string, unknown>): Promise<string | undefined> {
    // The _id index is checked first, so an _id equal to the key only counts when it is really taken.
    if (doc._id === e.key && (await db.findOneAsync({ _id: e.key } as never))) return "_id";
    return uniqueFields.find((f) => f !== "_id" && doc[f] === e.key);
  }

  const tallySpecs = new Map<string, TallySpec>();
  async function groupCounts(name: string): Promise<Map<string, number>> {
    const counts = new Map<string, number>();
    const spec = tallySpecs.get(name);
    if (!spec) return counts;
    // Only the fields the groups come from are copied out, when the tally names them.
    const projection = spec.fields ? Object.fromEntries(spec.fields.map((f) => [f, 1])) : {};
    for (const d of (await db.findAsync({}, projection as never)) as Array<Record<string, unknown>>) {
      for (const g of new Set(spec.groups(d))) counts.set(g, (counts.get(g) ?? 0) + 1);
    }
    return counts;
  }
  const rethrow = async (e: unknown, doc: Record<string, unknown>): Promise<never> => {
    if (isUniqueViolation(e)) throw new DuplicateKeyError(await clashingField(e, doc));
    throw e;
  };

  const update = async (filter: Filter, upd: Update, multi: boolean, durable = true) => {
    try {
      return await write(() => internals._updateAsync(filter, upd, { multi, returnUpdatedDocs: !multi }), durable);
    } catch (e) {
      return rethrow(e, (upd.$set ?? {}) as Record<string, unknown>);
    }
  };

  return {
    async insertOne(doc) {
      try {
        await write(() => internals._insertAsync(doc));
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
    // NeDB is on its way out (SQLite replaces it): its tallies are full passes, kept only so
    // the stores run unchanged on it meanwhile.
    async ensureTally(spec) {
      tallySpecs.set(spec.name, spec);
    },
    async tally(name, group) {
      return (await groupCounts(name)).get(group) ?? 0;
    },
    tallies: (name) => groupCounts(name),
    async recount() {},
    async updateOne(filter, upd) {
      const r = (await update(filter, upd, false)) as { numAffected: number };
      // NeDB counts matched documents and does not say whether they changed.
      return { matched: r.numAffected, modified: r.numAffected };
    },
    async findOneAndUpdate(filter, upd, o) {
      const r = (await update(filter, upd, false, o?.durable ?? true)) as { numAffected: number; affectedDocuments: unknown };
      const d = r.affectedDocuments as unknown as D | null;
      return r.numAffected === 1 && d ? d : null;
    },
    async updateMany(filter, upd) {
      const r = (await update(filter, upd, true)) as { numAffected: number };
      return { matched: r.numAffected, modified: r.numAffected };
    },
    async bulkUpdate(ops) {
      // In process: nothing to share, one after another.
      let matched = 0;
      for (const o of ops) matched += ((await update(o.filter, o.update, false)) as { numAffected: number }).numAffected;
      return { matched };
    },
    async upsertOne(key, upd, o) {
      // NeDB builds the new document from the query's plain values and the modifiers, as MongoDB does.
      await write(() => internals._updateAsync(key, upd, { multi: false, upsert: true }), o?.durable ?? true);
    },
    deleteMany: (filter) => write(() => internals._removeAsync(filter, { multi: true })),
    async ensureIndex(spec, o = {}) {
      const [fieldName, ...more] = Object.keys(spec.keys);
      // A compound index would become an index of its first key alone, which costs NeDB more than it saves.
      if (!fieldName || fieldName === "_id" || more.length > 0) return;
      await db.ensureIndexAsync({ fieldName, unique: o.unique ?? false, sparse: o.sparse ?? false });
      if (o.unique && !uniqueFields.includes(fieldName)) uniqueFields.push(fieldName);
    },
    async close() {
      compaction?.stop();
      // Rewrites the file without superseded lines so it does not keep growing; on a full volume it stays as it is.
      if (opts.filename) await compact(db, opts.filename).catch((err) => opts.onCompactionError?.(err));
      journal?.close();
    },
  };
}

/**
 * Runs one write as a single task in NeDB's queue, recording how to undo each
 * index change it makes; if the write throws (the append failed, a unique
 * index refused it), the changes are undone in reverse before anything else
 * reads. The caller gets the result after the journal's sync.
 */
function transactional(db: NedbInternals, journal: AppendJournal | undefined) {
  let undo: Array<() => void> | undefined;
  const add = db._addToIndexes.bind(db);
  const remove = db._removeFromIndexes.bind(db);
  const change = db._updateIndexes.bind(db);
  // Each hook runs NeDB's own function first: if that throws, it rolled itself back and nothing is recorded.
  db._addToIndexes = (doc) => {
    add(doc);
    undo?.push(() => remove(doc));
  };
  db._removeFromIndexes = (doc) => {
    remove(doc);
    undo?.push(() => add(doc));
  };
  db._updateIndexes = (oldDoc, newDoc) => {
    change(oldDoc, newDoc);
    if (Array.isArray(oldDoc)) {
      const back = oldDoc.map((m) => ({ oldDoc: m.newDoc, newDoc: m.oldDoc }));
      undo?.push(() => change(back));
    } else undo?.push(() => change(newDoc!, oldDoc));
  };

  return async function write<T>(op: () => Promise<T>, durable = true): Promise<T> {
    const result = await db.executor.pushAsync(async () => {
      undo = [];
      try {
        return await op();
      } catch (err) {
        for (const step of undo.reverse()) step();
        throw err;
      } finally {
        undo = undefined;
      }
    });
    if (durable) await journal?.sync();
    return result;
  };
}

/**
 * NeDB appends every write with fs.appendFile, which opens and closes the
 * datafile each time: a third of the CPU of a create in the embedded default
 * went to open/close (bench/README.md, round 4). The same lines go to a
 * journal (journal.ts) that keeps the descriptor open and writes
 * synchronously: a few hundred bytes into the page cache take microseconds,
 * less than the thread-pool round trip of an asynchronous write. Compaction
 * replaces the file (written and synced in full), so the journal drops its
 * descriptor then and reopens on the next write.
 */
function journalFor(db: InstanceType<typeof Datastore>, filename: string, opts: { what: string; durable?: boolean }): AppendJournal {
  const persistence = (db as unknown as NedbInternals).persistence;
  // A NeDB release without this hook would otherwise silently stop persisting through us.
  if (typeof persistence.persistNewStateAsync !== "function") throw new Error("@seald-io/nedb: Persistence#persistNewStateAsync is missing; check the pinned version");
  const journal = new AppendJournal(filename, opts);
  db.on("compaction.done", () => journal.replaced());
  persistence.persistNewStateAsync = async (docs) => {
    let lines = "";
    for (const doc of docs) lines += `${serialize(doc)}\n`;
    journal.append(lines);
  };
  return journal;
}

/** Rewrites the datafile; a failed rewrite (no space for the copy) leaves the old file and removes the partial copy. */
async function compact(db: InstanceType<typeof Datastore>, filename: string): Promise<void> {
  try {
    await db.compactDatafileAsync();
  } catch (err) {
    await unlink(`${filename}~`).catch(() => undefined);
    throw err;
  }
}

/** NeDB's own timer leaves a failed compaction as an unhandled rejection, which ends the process; this one reports it. */
function startCompaction(db: InstanceType<typeof Datastore>, filename: string, everyMs: number, onError?: (err: unknown) => void): { stop(): void } {
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    compact(db, filename)
      .catch((err) => onError?.(err))
      .finally(() => (running = false));
  }, Math.max(everyMs, 5_000));
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
