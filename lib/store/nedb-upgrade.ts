// Carries a DATA_DIR written by the NeDB release over to the databases of this
// one, on the first start, before any store opens.
//
// Per database: when its NeDB files are there and the database does not say
// the upgrade is complete, every document is copied through the collection
// port in batches (the driver keeps tallies and indexes as for any write),
// then the database records that it is complete and the old files move to
// DATA_DIR/nedb-before-sqlite/, where they stay until the operator removes
// them. A copy that was interrupted starts again from its last recorded batch;
// a document already copied is refused as a duplicate _id and skipped, so a
// restart never duplicates or loses one. Before anything is written the free
// space is checked, so a disk too small stops start-up with nothing changed.
import { mkdir, rename, stat, statfs } from "node:fs/promises";
import path from "node:path";
import { ConfigError } from "../config.js";
import type { Logger } from "../log.js";
import { openSqliteDatabase } from "./sqlite-collection.js";
import { DuplicateKeyError, type DocumentCollection } from "./collection.js";
import { openNedbDatafile, type NedbDatafile, type NedbDocument } from "./nedb-datafile.js";

/** Where the old files go; kept until the operator removes them. */
export const NEDB_ASIDE_DIR = "nedb-before-sqlite";

/** What the upgrade needs of a database: the collection port, by name. */
export interface UpgradeTarget {
  collection<D extends { _id: string }>(name: string, opts?: { packed?: readonly string[] }): DocumentCollection<D>;
  close(): Promise<void>;
}

export interface NedbUpgradePlan {
  /** Names the database in the log, e.g. "articles". */
  what: string;
  /** Directory under DATA_DIR that holds both the NeDB files and the new database, e.g. "articles". */
  dir: string;
  /** The new database's file in `dir`. */
  database: string;
  /** NeDB file name in `dir` → collection name in the new database. */
  collections: Record<string, string>;
  /** Collection name → how one of its documents changes shape on the way (absent: copied as it is). */
  reshape?: Record<string, (doc: NedbDocument) => NedbDocument>;
  /** Collection name → its fields the embedded store keeps deflated, so copies are stored as the service stores them. */
  packed?: Record<string, readonly string[]>;
}

/** The NeDB release's files, per service, and the collections of this release that take them over. */
export const NEDB_RELEASE = {
  auth: { what: "auth", dir: "auth", database: "auth.sqlite", collections: { "projects.db": "projects", "tokens.db": "tokens", "oembed-claims.db": "oembed_claims" } },
  articles: {
    what: "articles",
    dir: "articles",
    database: "articles.sqlite",
    collections: { "articles.db": "articles", "pronunciations.db": "pronunciations", "listening-stats.db": "listening_stats" },
    // The SQLite layout mirrors deletion in a flag, the listing index's equality prefix (services/articles/store/layout.ts).
    reshape: { articles: (d) => ({ ...d, deleted: d.status === "deleted" }) },
  },
} as const satisfies Record<string, NedbUpgradePlan>;

export interface NedbUpgradeOptions {
  log: Logger;
  /** Opens (creating) the new database at `filename`; default the embedded SQLite database. */
  open?(filename: string, what: string): Promise<UpgradeTarget>;
  /** Documents written together (one transaction where the driver groups the writes of a turn). */
  batchSize?: number;
  /** Free bytes on the volume of `dir`; statfs unless a test says otherwise. */
  freeBytes?: (dir: string) => Promise<number>;
  /** Called after each batch is written and recorded; a throw stops the copy there (tests of resuming). */
  afterBatch?: (collection: string, copied: number) => void | Promise<void>;
  /** Least time between two progress lines per collection. */
  progressEveryMs?: number;
}

/** The database's own record of the upgrade, in a collection of its own. */
const META_COLLECTION = "upgrade";
type MetaDoc = { _id: string; complete?: boolean; completedAt?: Date; copied?: number; documents?: Record<string, number> };

/**
 * The space a database needs, beyond what it already takes: its documents are
 * stored once more as JSON (superseded lines of the old file do not come
 * along, indexes and the write-ahead log do), with room to spare for both.
 */
export const spaceNeeded = (nedbBytes: number, existingBytes: number): number => Math.max(0, Math.ceil(nedbBytes * 1.5) - existingBytes) + 32 * 1024 * 1024;

/** A ConfigError, so start-up stops with the message alone, like a bad variable. */
export class UpgradeSpaceError extends ConfigError {
  constructor(readonly dataDir: string, readonly needed: number, readonly free: number) {
    const mib = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MiB`;
    super(
      `Cannot upgrade DATA_DIR=${dataDir} from the NeDB files: it needs about ${mib(needed)} of free space and its volume has ${mib(free)}. ` +
        "Nothing was changed; free some space (or move DATA_DIR to a larger volume) and start again.",
    );
  }
}

const sizeOf = async (file: string): Promise<number | undefined> => {
  try {
    return (await stat(file)).size;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw err;
  }
};

/**
 * NeDB compacted a file by writing `<file>~` and renaming it over the file; a
 * crash between the two left only the `~` copy, which NeDB then took as the
 * file. So do we; a `~` beside a file is an unfinished copy and only moves aside.
 */
async function nedbFilesOf(dataDir: string, plan: NedbUpgradePlan): Promise<Array<{ file: string; path: string; bytes: number }>> {
  const found = [];
  for (const file of Object.keys(plan.collections)) {
    for (const p of [path.join(dataDir, plan.dir, file), path.join(dataDir, plan.dir, `${file}~`)]) {
      const bytes = await sizeOf(p);
      if (bytes === undefined) continue;
      found.push({ file, path: p, bytes });
      break;
    }
  }
  return found;
}

type Collections = <D extends { _id: string }>(name: string) => DocumentCollection<D>;

async function isComplete(collection: Collections): Promise<boolean> {
  return (await collection<MetaDoc>(META_COLLECTION).findOne({ _id: "nedb" }))?.complete === true;
}

/**
 * Upgrades each plan's database that still has NeDB files. Answers which
 * databases were copied now. Throws UpgradeSpaceError (nothing changed) when
 * the volume is too small for all of them.
 */
export async function upgradeFromNedb(dataDir: string, plans: NedbUpgradePlan[], opts: NedbUpgradeOptions): Promise<string[]> {
  const pending: Array<{ plan: NedbUpgradePlan; files: Awaited<ReturnType<typeof nedbFilesOf>> }> = [];
  for (const plan of plans) {
    const files = await nedbFilesOf(dataDir, plan);
    if (files.length) pending.push({ plan, files });
  }
  if (!pending.length) return [];

  // Checked before any database is opened: opening one creates its file.
  let needed = 0;
  for (const { plan, files } of pending) {
    let existing = 0;
    // A resumed copy: what the database (and its write-ahead log) holds already.
    for (const f of [plan.database, `${plan.database}-wal`]) existing += (await sizeOf(path.join(dataDir, plan.dir, f))) ?? 0;
    needed += spaceNeeded(files.reduce((s, f) => s + f.bytes, 0), existing);
  }
  const free = await (opts.freeBytes ?? freeBytesOf)(dataDir);
  if (free < needed) throw new UpgradeSpaceError(dataDir, needed, free);

  const copied: string[] = [];
  for (const { plan, files } of pending) {
    const target = await (opts.open ?? ((filename, what) => openSqliteDatabase({ filename, what })))(path.join(dataDir, plan.dir, plan.database), plan.what);
    // Each collection handle holds the database open until it is closed too.
    const used: Array<DocumentCollection<{ _id: string }>> = [];
    const collection: Collections = <D extends { _id: string }>(name: string) => {
      const c = target.collection<D>(name, { packed: plan.packed?.[name] });
      used.push(c as unknown as DocumentCollection<{ _id: string }>);
      return c;
    };
    try {
      if (!(await isComplete(collection))) {
        await copyDatabase(plan, files, collection, opts);
        copied.push(plan.what);
      }
    } finally {
      for (const c of used) await c.close();
      await target.close();
    }
    await moveAside(dataDir, plan, files, opts.log);
  }
  return copied;
}

async function freeBytesOf(dir: string): Promise<number> {
  const s = await statfs(dir);
  return s.bavail * s.bsize;
}

async function copyDatabase(plan: NedbUpgradePlan, files: Awaited<ReturnType<typeof nedbFilesOf>>, collection: Collections, opts: NedbUpgradeOptions): Promise<void> {
  const meta = collection<MetaDoc>(META_COLLECTION);
  const log = opts.log;
  const documents: Record<string, number> = {};
  log.info({ database: plan.what, files: files.map((f) => f.path) }, `upgrading the ${plan.what} data from NeDB files; the old files are kept aside afterwards`);
  for (const f of files) {
    const name = plan.collections[f.file];
    const datafile = await openNedbDatafile(f.path);
    if (datafile.unreadableLines) log.warn({ file: f.path, lines: datafile.unreadableLines }, "unreadable lines in a NeDB file skipped, as NeDB itself did (a write torn by a crash)");
    documents[name] = await copyCollection(datafile, name, collection<NedbDocument>(name), meta, opts, plan.reshape?.[name]);
  }
  await meta.upsertOne({ _id: "nedb" }, { $set: { complete: true, completedAt: new Date(), documents } });
  log.info({ database: plan.what, documents }, `the ${plan.what} data is upgraded`);
}

async function copyCollection(
  datafile: NedbDatafile,
  name: string,
  col: DocumentCollection<NedbDocument>,
  meta: DocumentCollection<MetaDoc>,
  opts: NedbUpgradeOptions,
  reshape: (doc: NedbDocument) => NedbDocument = (d) => d,
): Promise<number> {
  const batchSize = opts.batchSize ?? 500;
  const everyMs = opts.progressEveryMs ?? 2_000;
  const total = datafile.documents;
  const progressId = `nedb:${name}`;
  // The batches recorded by an interrupted run hold documents already copied: the file is read in the same order again.
  const resumeAt = (await meta.findOne({ _id: progressId }))?.copied ?? 0;
  const started = Date.now();
  let lastLog = started;
  let seen = 0;
  let copied = resumeAt;
  let batch: NedbDocument[] = [];

  const report = (final: boolean) => {
    const secs = (Date.now() - started) / 1000;
    const rate = secs > 0 ? Math.round((copied - resumeAt) / secs) : 0;
    const percent = total ? Math.round((copied / total) * 1000) / 10 : 100;
    opts.log.info({ collection: name, documents: copied, total, percent, perSecond: rate, resumedAt: resumeAt || undefined }, `${final ? "copied" : "copying"} ${name}: ${copied} of ${total} (${percent}%, ${rate}/s)`);
    lastLog = Date.now();
  };

  const flush = async () => {
    // Started together so the driver can commit the batch as one transaction.
    await Promise.all(batch.map((d) => insertOrSkip(col, d)));
    copied += batch.length;
    batch = [];
    await meta.upsertOne({ _id: progressId }, { $set: { copied } });
    await opts.afterBatch?.(name, copied);
    if (Date.now() - lastLog >= everyMs) report(false);
  };

  if (resumeAt) opts.log.info({ collection: name, documents: resumeAt, total }, `resuming the copy of ${name} after ${resumeAt} documents`);
  // A collection the interrupted run finished is not read again.
  if (resumeAt < total) {
    for await (const doc of datafile.read()) {
      if (seen++ < resumeAt) continue;
      batch.push(reshape(doc));
      if (batch.length >= batchSize) await flush();
    }
  }
  if (batch.length) await flush();
  report(true);
  return copied;
}

/** A document already there was copied by the interrupted run (the old file never changes): it is the same one. */
async function insertOrSkip(col: DocumentCollection<NedbDocument>, doc: NedbDocument): Promise<void> {
  try {
    await col.insertOne(doc);
  } catch (err) {
    if (err instanceof DuplicateKeyError && (err.field === "_id" || (err.field === undefined && (await col.findOne({ _id: doc._id }))))) return;
    throw err;
  }
}

async function moveAside(dataDir: string, plan: NedbUpgradePlan, files: Awaited<ReturnType<typeof nedbFilesOf>>, log: Logger): Promise<void> {
  const aside = path.join(dataDir, NEDB_ASIDE_DIR, plan.dir);
  await mkdir(aside, { recursive: true });
  for (const f of files) {
    await rename(f.path, path.join(aside, path.basename(f.path)));
    const unfinished = path.join(dataDir, plan.dir, `${f.file}~`);
    if (f.path !== unfinished && (await sizeOf(unfinished)) !== undefined) await rename(unfinished, path.join(aside, `${f.file}~`));
  }
  log.info({ dir: aside }, `the ${plan.what} NeDB files are kept in ${aside}; remove them once the upgraded platform has your data`);
}
