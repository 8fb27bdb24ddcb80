// Embedded driver: document collections in one SQLite database file per
// service (better-sqlite3). A collection is a table of JSON documents keyed
// by `_id`; its indexes are expression indexes on the fields' JSON paths, and
// filters are translated to SQL over the same expressions (sqlite-filter.ts)
// so queries page through indexes instead of loading documents.
//
// Writes: every write of a turn of the event loop runs in one transaction
// with one commit (group commit), each in its own SAVEPOINT so a refused
// write (a unique key taken) does not undo the others. A failed commit (full
// or read-only volume, I/O error) rejects every write of the group with a
// StorageError and changes nothing.
//
// Durability without stalling the event loop: better-sqlite3 is synchronous,
// and a commit with synchronous=FULL would hold the loop (and every request)
// for the whole fsync, 3 ms on a quiet disk and over 100 ms on a busy one.
// So commits are made in WAL mode without a sync, then the log is
// fdatasync'ed on the thread pool, and only then are the group's writes
// answered; the next group waits, gathering the writes that arrive meanwhile
// (as SQLite's own FULL mode would, without the stall). Until then nobody may
// read the commit: reads go to a second, read-only connection that holds a
// snapshot and moves it forward only after each sync. The writes' own
// conditional reads run on the writing connection and see everything. Reads by
// key run on the writing connection too whenever it holds nothing unsynced
// (between groups): SQLite empties a connection's page cache whenever another
// one committed, so the reader re-reads its pages after every group, while the
// writer's cache stays warm across its own commits.
import type Database from "better-sqlite3";
import { isSqliteError, sqliteDriver } from "./sqlite-binding.js";
import { randomBytes } from "node:crypto";
import { closeSync, fdatasync, fsyncSync, mkdirSync, openSync, readSync } from "node:fs";
import { endianness } from "node:os";
import { dirname, resolve } from "node:path";
import { DuplicateKeyError, type DerivedFill, type DocumentCollection, type Filter, type FindOptions, type IndexOptions, type IndexSpec, type TallySpec, type TextIndexSpec, type Update } from "./collection.js";
import { applyUpdate, upsertedDoc } from "./document-update.js";
import { StorageError, storageErrorFromFs, storageErrorFromSqlite } from "./errors.js";
import { fieldExpr, jsonPath, orderBy, whereOf } from "./sqlite-filter.js";
import { fromJson, sqlValue, toJson } from "./sqlite-json.js";
import { BACKFILL_TABLE, backfillPage, createSql, dropText, keepScopeTerms, mergeStep, moveText, searchPage, tablesOf, textIndexOf, type TextIndex } from "./sqlite-search.js";
import { reusedDeflateRaw, reusedInflateRaw } from "./reused-zlib.js";
import { SizedFifo } from "../sized-fifo.js";

export interface SqliteDatabaseOptions {
  /** Database file; its directory is created. Omit for a database in memory. */
  filename?: string;
  /** Names the store in error messages, e.g. "articles". */
  what: string;
  /** false: commits do not wait for the disk (the benchmark's reference); default true. */
  durable?: boolean;
  /** Page cache of the connection, KiB; the only memory that grows with use. Default 16 MiB. */
  cacheKiB?: number;
}

export interface SqliteCollectionOptions {
  /**
   * Large text fields kept deflated in a column of their own instead of in the JSON: an
   * article's text is most of its row, and prose deflates to about half. Filters may not name
   * them; a find that omits them (FindOptions.omit) does not inflate them. Rows written before
   * a field was packed keep it in the JSON until they are next written.
   */
  packed?: readonly string[];
}

export interface SqliteDatabase {
  /** A collection in this database (its table is created on first use). */
  collection<D extends { _id: string }>(name: string, opts?: SqliteCollectionOptions): DocumentCollection<D>;
  /** Releases this handle; the database closes once its collections are closed too. */
  close(): Promise<void>;
  /** Commits made so far (tests of group commit). */
  readonly commits: number;
  /** EXPLAIN QUERY PLAN of the query `find` would run (tests of index use). */
  plan(collection: string, filter: Filter, opts?: FindOptions): string[];
}

let durableByDefault = true;

/** For the benchmark's same-run reference only: databases opened from now on acknowledge writes before the disk has them. */
export function acknowledgeBeforeFsync(): void {
  durableByDefault = false;
}

type Doc = Record<string, unknown>;
/** `z`: the packed fields as deflated JSON; null when the row has none (or predates packing). */
type Row = { r: number; _id: string; doc: string; z?: Buffer | null };

// A small window and hash table: zlib's defaults set up and clear a 256 KB state per call,
// several times the work of deflating 1 KB of prose, for the same ratio on articles.
const DEFLATE = { level: 6, windowBits: 12, memLevel: 5 } as const;
const INFLATE = { windowBits: 12 } as const;

/** A document as stored: the JSON column and the packed fields' JSON (null: none). */
interface Stored {
  doc: string;
  packed: string | null;
}

/**
 * The JSON column without `_id` (the key column holds it already, and an archive's ids, a title
 * slug and a random part of ~50 characters, would otherwise be stored twice per row) and
 * without the packed fields.
 */
function storedOf(doc: Doc, packed: readonly string[]): Stored {
  const { _id: _unused, ...rest } = doc;
  let out: Doc | undefined;
  for (const f of packed) {
    if (rest[f] === undefined) continue;
    (out ??= {})[f] = rest[f];
    delete rest[f];
  }
  return { doc: toJson(rest), packed: out ? toJson(out) : null };
}

// One zlib stream each, reused: a stream made per call cost more than the work (reused-zlib.ts).
const deflater = reusedDeflateRaw(DEFLATE);
const inflater = reusedInflateRaw(INFLATE);
const deflated = (packed: string | null): Buffer | null => (packed === null ? null : deflater.buffer(Buffer.from(packed, "utf8")));
const inflated = (z: Buffer | null | undefined): string | null => (z ? inflater.text(z) : null);

/** Characters of inflated text kept per table for rows read again (a hot article is read many times). */
const RECENT_PACKED_CHARS = 4 * 1024 * 1024;

/**
 * The packed fields of rows read lately, by id, each with the deflated bytes they came from, so
 * a row read again is inflated again only when it was written since. Bounded by characters;
 * the oldest entries go first.
 */
class RecentlyInflated {
  // Oldest first out without a walk from the map's start (lib/sized-fifo.ts): with more rows read
  // than fit, every read evicted one.
  private readonly byId = new SizedFifo<{ z: Buffer; packed: string }>(RECENT_PACKED_CHARS);

  packedOf(id: string, z: Buffer | null | undefined): string | null {
    if (!z) return null;
    const hit = this.byId.get(id);
    if (hit && hit.z.equals(z)) return hit.packed;
    const packed = inflated(z)!;
    if (packed.length > RECENT_PACKED_CHARS / 16) this.byId.delete(id);
    else this.byId.set(id, { z, packed }, packed.length);
    return packed;
  }
}

/** A row's document; rows of the first SQLite builds still carry `_id` in the JSON too. */
function docOf(row: { _id: string; doc: string }, packed: string | null = null): Doc {
  const d = fromJson<Doc>(row.doc);
  if (packed !== null) Object.assign(d, fromJson<Doc>(packed));
  d._id = row._id;
  return d;
}

/** Whether a filter names one of `fields` anywhere (inside its operators too). */
function names(filter: unknown, fields: readonly string[]): boolean {
  if (Array.isArray(filter)) return filter.some((f) => names(f, fields));
  if (!filter || typeof filter !== "object") return false;
  return Object.entries(filter).some(([k, v]) => fields.includes(k.split(".")[0]) || (k.startsWith("$") && names(v, fields)));
}

/** What a collection's table knows, shared by every handle on it. */
interface TableState {
  table: string;
  /** Indexed fields: filters treat them as single-valued (sqlite-filter.ts). */
  scalar: Set<string>;
  /** SQLite index name → the field that makes it unique. */
  unique: Map<string, string>;
  tallies: TallySpec[];
  /** Fields written deflated in the `z` column (SqliteCollectionOptions.packed). */
  packed: string[];
  recent: RecentlyInflated;
  /** Multikey indexes (IndexOptions.multikey), each kept as a table of entries. */
  entries: EntryIndex[];
  /** Full-text indexes (sqlite-search.ts). */
  texts: TextIndex[];
  /** DocumentCollection.changes: grows after a write of this table commits, and again once plain reads see it. */
  changes: number;
  /** DocumentCollection.rewrites: as `changes`, for every write but a plain insert. */
  rewrites: number;
  /** A write that was not a plain insert committed, and plain reads do not see it yet. */
  rewriteUnseen: boolean;
}

/**
 * SQLite indexes one value per row and key, so an index over an array field is a table of its
 * own: a row per document and distinct element, its columns the index keys in order (`k0`...,
 * the document's `_id` last when the keys lack it), its primary key all of them. Rows change in
 * the same savepoint as their document, so they never disagree with it.
 */
interface EntryIndex {
  name: string;
  table: string;
  keys: Array<[string, 1 | -1]>;
  array: string;
}

interface PendingWrite {
  work: () => unknown;
  durable: boolean;
  /** The table written, whose `changes` grow once reads may see the write. */
  table?: TableState;
  /** Only inserts new documents: `rewrites` does not grow for it. */
  insertOnly?: boolean;
  resolve(v: unknown): void;
  reject(e: unknown): void;
}

const NAME = /^[A-Za-z][A-Za-z0-9_]*$/;
const STATEMENT_CACHE = 500;
/** The write-ahead log is copied into the database and emptied once it holds this much. */
const CHECKPOINT_BYTES = 8 * 1024 * 1024;

/** Open databases by file, so the stores of one service share a connection and its group commit. */
const openFiles = new Map<string, Shared>();

class Shared {
  /** Writes, and the conditional reads inside them: always the newest committed state. */
  readonly conn: Database.Database;
  /** Plain reads: a snapshot moved forward only once the commits in it are on disk (the writer itself in memory). */
  private readonly reader: Database.Database;
  readonly tables = new Map<string, TableState>();
  commits = 0;
  private refs = 0;
  private pending: PendingWrite[] = [];
  /** A group's commit is being made durable; the next group waits for it. */
  private syncing = false;
  /** Tables with commits plain reads do not see yet (their `changes` grow again when they do). */
  private readonly unseen = new Set<TableState>();
  /** The writing connection holds a commit plain reads may not see yet (made, not yet synced: Shared.flush). */
  private writerAhead = false;
  /** A group's transaction is open on the writing connection (Shared.commit). */
  private writing = false;
  /** Plain reads hold a read transaction open on the writing connection (Shared.readStmt). */
  private writerReading = false;
  private idle: Array<() => void> = [];
  private walFd: number | undefined;
  /** The wal-index file (`-shm`), read for how many frames the log holds (Shared.logBytes). */
  private shmFd: number | undefined;
  private frameBytes = 0;
  private walDirSynced = false;
  private readonly writes = new Map<string, Database.Statement>();
  private readonly reads = new Map<string, Database.Statement>();
  private readonly control: Record<"begin" | "commit" | "rollback" | "savepoint" | "release" | "rollbackTo", Database.Statement>;
  private readonly snapshot: Record<"end" | "begin" | "take", Database.Statement> | undefined;
  private readonly writerSnapshot: Record<"end" | "begin" | "take", Database.Statement> | undefined;

  constructor(
    readonly key: string | undefined,
    readonly what: string,
    private readonly durable: boolean,
    cacheKiB: number,
  ) {
    if (key) mkdirSync(dirname(key), { recursive: true });
    const cache = `cache_size = -${Math.max(1024, Math.floor(cacheKiB))}`;
    const Driver = sqliteDriver();
    try {
      this.conn = new Driver(key ?? ":memory:");
      // An article document is 1-2 KB: 4 KB pages held two and left a third of each page empty
      // (2.5x the raw text on disk). 16 KB pages waste at most one document's room per page.
      // Only a new database takes it (set before WAL and before the first table); an existing one keeps its size.
      this.conn.pragma("page_size = 16384");
      if (key) this.conn.pragma("journal_mode = WAL");
      // The commit does not wait for the disk; flush() syncs the log off the event loop before anyone is answered.
      this.conn.pragma("synchronous = NORMAL");
      this.conn.pragma(cache);
      // A savepoint's journal (the pages a write changes, as they were) stays in memory: past 64 KiB
      // SQLite moves it to a temporary file, opened, written and deleted again for every group.
      // Only writes and reads by key run here, so no sort or temporary table grows in memory.
      this.conn.pragma("temp_store = MEMORY");
      // Another process (the admin CLI) may hold the lock for a moment.
      this.conn.pragma("busy_timeout = 5000");
      // Checkpoints are made between groups (checkpoint()), where the reading snapshot can let go of the log.
      this.conn.pragma("wal_autocheckpoint = 0");
      this.ddl(
        "CREATE TABLE IF NOT EXISTS _tallies (tbl TEXT NOT NULL, name TEXT NOT NULL, grp TEXT NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (tbl, name, grp)) WITHOUT ROWID;" +
          "CREATE TABLE IF NOT EXISTS _tally_names (tbl TEXT NOT NULL, name TEXT NOT NULL, PRIMARY KEY (tbl, name)) WITHOUT ROWID;",
      );
      this.reader = key ? new Driver(key, { readonly: true }) : this.conn;
      if (key) {
        this.reader.pragma(cache);
        this.reader.pragma("busy_timeout = 5000");
      }
    } catch (e) {
      throw storageErrorFromSqlite(e, what);
    }
    const p = (sql: string) => this.conn.prepare(sql);
    this.control = {
      begin: p("BEGIN IMMEDIATE"),
      commit: p("COMMIT"),
      rollback: p("ROLLBACK"),
      savepoint: p("SAVEPOINT w"),
      release: p("RELEASE w"),
      rollbackTo: p("ROLLBACK TO w"),
    };
    if (key) {
      this.snapshot = { end: this.reader.prepare("COMMIT"), begin: this.reader.prepare("BEGIN"), take: this.reader.prepare("SELECT 1 FROM sqlite_schema LIMIT 1") };
      this.writerSnapshot = { end: p("COMMIT"), begin: p("BEGIN"), take: p("SELECT 1 FROM sqlite_schema LIMIT 1") };
      this.advanceReads();
    }
  }

  acquire(): void {
    this.refs++;
  }

  async release(): Promise<void> {
    if (--this.refs > 0 || !this.conn.open) return;
    if (this.key) openFiles.delete(this.key);
    // Writes already queued are made and answered first.
    while (this.syncing || this.pending.length) {
      await new Promise<void>((resolve) => {
        this.idle.push(resolve);
        if (!this.syncing) this.flush();
      });
    }
    if (this.reader !== this.conn) this.reader.close();
    this.endWriterRead();
    this.conn.close();
    if (this.walFd !== undefined) closeSync(this.walFd);
    if (this.shmFd !== undefined) closeSync(this.shmFd);
  }

  /** Schema changes commit at once and durably (tables and indexes are made at start), and reads see them. */
  ddl(sql: string): void {
    this.endWriterRead();
    this.conn.pragma("synchronous = FULL");
    try {
      this.conn.exec(sql);
    } finally {
      this.conn.pragma("synchronous = NORMAL");
    }
    // FULL synced the log with everything in it: nothing not durable becomes visible.
    if (this.snapshot) this.advanceReads();
  }

  /** A prepared statement of the writing connection per SQL text; plucked ones answer their single column. */
  stmt(sql: string, pluck = false): Database.Statement {
    return this.cached(this.writes, this.conn, sql, pluck);
  }

  /** The same for plain reads, on the reading snapshot. */
  readStmt(sql: string, pluck = false): Database.Statement {
    return this.cached(this.reads, this.reader, sql, pluck);
  }

  /**
   * A plain read of one row by its key: on the writing connection whenever that holds nothing
   * reads may not see yet (no commit waiting for its sync, no group's transaction open), else on
   * the reading snapshot. The writer keeps its page cache across its own commits, while the
   * reader's is emptied each time its snapshot moves: with creates among the reads, reads by id
   * went back to the file for most pages, a pread each.
   */
  pointStmt(sql: string): Database.Statement {
    if (!this.writerSnapshot || this.writerAhead || this.writing) return this.cached(this.reads, this.reader, sql, false);
    // Reads between two groups share one read transaction, as the reader's do: a statement of its
    // own would look the log's index up again each time. A group's transaction ends it first.
    if (!this.writerReading) {
      this.writerSnapshot.begin.run();
      this.writerSnapshot.take.get();
      this.writerReading = true;
    }
    return this.cached(this.writes, this.conn, sql, false);
  }

  /** Ends the writing connection's read transaction, before it writes or checkpoints. */
  private endWriterRead(): void {
    if (!this.writerReading) return;
    this.writerReading = false;
    this.writerSnapshot!.end.run();
  }

  private cached(cache: Map<string, Database.Statement>, db: Database.Database, sql: string, pluck: boolean): Database.Statement {
    const key = pluck ? `p:${sql}` : sql;
    let s = cache.get(key);
    if (!s) {
      if (cache.size >= STATEMENT_CACHE) cache.clear();
      s = db.prepare(sql);
      if (pluck) s.pluck();
      cache.set(key, s);
    }
    return s;
  }

  /** Runs a read, answering an engine failure as a StorageError. */
  read<T>(work: () => T): Promise<T> {
    try {
      return Promise.resolve(work());
    } catch (e) {
      return Promise.reject(isSqliteError(e) ? storageErrorFromSqlite(e, this.what) : e);
    }
  }

  /** Queues a write for this turn's transaction; settles once its commit is durable (or made, for `durable` false). */
  write<T>(work: () => T, durable = true, table?: TableState, insertOnly = false): Promise<T> {
    if (!this.conn.open) return Promise.reject(new StorageError("unavailable", `the ${this.what} store is closed; nothing was written`));
    return new Promise<T>((resolve, reject) => {
      this.pending.push({ work, durable, table, insertOnly, resolve: resolve as (v: unknown) => void, reject });
      if (this.pending.length === 1) setImmediate(() => this.flush());
    });
  }

  /** Moves the reading connection's snapshot to the newest commit. */
  private advanceReads(): void {
    this.writerAhead = false;
    if (this.snapshot) {
      if (this.reader.inTransaction) this.snapshot.end.run();
      this.snapshot.begin.run();
      this.snapshot.take.get();
    }
    // Plain reads see these tables' commits now (a group whose sync failed included).
    for (const t of this.unseen) {
      t.changes++;
      if (t.rewriteUnseen) {
        t.rewrites++;
        t.rewriteUnseen = false;
      }
    }
    this.unseen.clear();
  }

  private failure(e: unknown): unknown {
    return isSqliteError(e) ? storageErrorFromSqlite(e, this.what) : e;
  }

  private flush(): void {
    if (this.syncing || !this.conn.open) return;
    const batch = this.pending;
    this.pending = [];
    if (batch.length === 0) {
      for (const done of this.idle.splice(0)) done();
      return;
    }
    const outcomes = this.commit(batch);
    if (!outcomes) return this.flush();
    // Seen by the writing connection now (and by plain reads too where there is no snapshot);
    // grown again when the reading snapshot moves past the commit, whichever group moves it.
    for (const w of batch) {
      if (!w.table) continue;
      w.table.changes++;
      if (!w.insertOnly) {
        w.table.rewrites++;
        w.table.rewriteUnseen = true;
      }
      this.unseen.add(w.table);
    }
    const settle = (failure?: unknown) =>
      outcomes.forEach((o, i) => {
        if (failure !== undefined) batch[i].reject(o.ok ? failure : o.error);
        else if (o.ok) batch[i].resolve(o.value);
        else batch[i].reject(o.error);
      });
    if (!this.key || !this.durable || batch.every((w) => !w.durable)) {
      // Only writes that may be lost in a power failure (leases, counters), or no disk at all.
      this.advanceReads();
      settle();
      this.checkpoint();
      return this.flush();
    }
    this.syncing = true;
    this.writerAhead = true;
    this.syncLog((err) => {
      this.syncing = false;
      if (err) {
        // Committed, but whether it would survive a power failure is unknown: never acknowledged, never shown to reads.
        settle(storageErrorFromFs(err, this.what));
      } else {
        this.advanceReads();
        settle();
      }
      this.checkpoint();
      this.flush();
    });
  }

  /**
   * The reading snapshot always holds the newest frames of the log, so SQLite
   * could never empty it on its own: between two groups, with nothing
   * unacknowledged in the log, the snapshot lets go, the log is copied into
   * the database and emptied (synchronously: once per CHECKPOINT_BYTES of
   * writes), and reads take a snapshot again.
   */
  private checkpoint(): void {
    if (!this.snapshot) return;
    try {
      if (this.logBytes() < CHECKPOINT_BYTES) return;
    } catch {
      return;
    }
    if (this.reader.inTransaction) this.snapshot.end.run();
    this.endWriterRead();
    try {
      // RESTART, not TRUNCATE: the next group writes the log again from its start, over blocks the
      // file already has. Appending to an emptied file made every write extend it, and every
      // fdatasync then wrote its size too (per create: ~40 µs more system CPU, in a bench of
      // inserts 3 at a time).
      this.conn.pragma("wal_checkpoint(RESTART)");
    } catch {
      // Busy (another process reading) or out of space: the log stays, and the next group tries again.
    }
    this.advanceReads();
  }

  /**
   * Bytes of frames the log holds now: the wal-index header's frame count (`mxFrame`, bytes
   * 16-19 of the `-shm` file, in the machine's byte order: sqlite.org/walformat.html). The log's
   * file size does not tell once it is restarted rather than truncated: it keeps its size.
   */
  private logBytes(): number {
    this.shmFd ??= openSync(`${this.key}-shm`, "r");
    this.frameBytes ||= 24 + (this.conn.pragma("page_size", { simple: true }) as number);
    const b = Buffer.alloc(4);
    readSync(this.shmFd, b, 0, 4, 16);
    return (endianness() === "LE" ? b.readUInt32LE(0) : b.readUInt32BE(0)) * this.frameBytes;
  }

  /** fdatasync of the write-ahead log, on the thread pool: the event loop serves reads meanwhile. */
  private syncLog(done: (err: NodeJS.ErrnoException | null) => void): void {
    if (!this.walDirSynced) {
      try {
        this.walFd ??= openSync(`${this.key}-wal`, "r");
        // The log file is new: its directory entry must reach the disk too.
        const dir = openSync(dirname(this.key!), "r");
        try {
          fsyncSync(dir);
        } finally {
          closeSync(dir);
        }
        this.walDirSynced = true;
      } catch (e) {
        return done(e as NodeJS.ErrnoException);
      }
    }
    fdatasync(this.walFd!, done);
  }

  /** One transaction for the group, a savepoint per write; undefined when it failed as a whole (every write rejected). */
  private commit(batch: PendingWrite[]): Array<{ ok: true; value: unknown } | { ok: false; error: unknown }> | undefined {
    this.writing = true;
    try {
      return this.commitGroup(batch);
    } finally {
      this.writing = false;
    }
  }

  private commitGroup(batch: PendingWrite[]): Array<{ ok: true; value: unknown } | { ok: false; error: unknown }> | undefined {
    try {
      this.endWriterRead();
      this.control.begin.run();
    } catch (e) {
      for (const w of batch) w.reject(this.failure(e));
      return undefined;
    }
    const outcomes: Array<{ ok: true; value: unknown } | { ok: false; error: unknown }> = [];
    let lost: unknown;
    // The first write of a transaction needs no savepoint: if it fails, the whole transaction is
    // rolled back and begun again. A savepoint copies every page the write changes into a journal
    // of its own (16 pages of 16 KB for an article), most of a small group's cost.
    let fresh = true;
    for (const w of batch) {
      if (lost !== undefined) {
        outcomes.push({ ok: false, error: lost });
        continue;
      }
      const bare = fresh;
      try {
        if (!bare) this.control.savepoint.run();
        const value = w.work();
        if (!bare) this.control.release.run();
        outcomes.push({ ok: true, value });
        fresh = false;
      } catch (e) {
        const error = this.failure(e);
        outcomes.push({ ok: false, error });
        // Some engine errors (full, I/O) end the whole transaction: the writes before this one are gone too.
        if (!this.conn.inTransaction) lost = error;
        else {
          try {
            if (bare) {
              this.control.rollback.run();
              this.control.begin.run();
            } else {
              this.control.rollbackTo.run();
              this.control.release.run();
            }
          } catch (undo) {
            lost = this.failure(undo);
          }
        }
      }
    }
    if (lost === undefined) {
      try {
        this.control.commit.run();
        this.commits++;
        return outcomes;
      } catch (e) {
        lost = this.failure(e);
      }
    }
    if (this.conn.inTransaction) {
      try {
        this.control.rollback.run();
      } catch {
        // The engine rolled back on its own.
      }
    }
    // Refused writes keep their own reason; every other write of the group failed with the commit.
    outcomes.forEach((o, i) => batch[i].reject(o.ok || !(o.error instanceof DuplicateKeyError) ? lost : o.error));
    return undefined;
  }
}

export async function openSqliteDatabase(opts: SqliteDatabaseOptions): Promise<SqliteDatabase> {
  const key = opts.filename ? resolve(opts.filename) : undefined;
  let shared = key ? openFiles.get(key) : undefined;
  if (!shared) {
    shared = new Shared(key, opts.what, opts.durable ?? durableByDefault, opts.cacheKiB ?? 16 * 1024);
    if (key) openFiles.set(key, shared);
  }
  const s = shared;
  s.acquire();
  let closed = false;
  return {
    collection: <D extends { _id: string }>(name: string, o?: SqliteCollectionOptions) => collectionOn<D>(s, name, o?.packed ?? []),
    async close() {
      if (closed) return;
      closed = true;
      await s.release();
    },
    get commits() {
      return s.commits;
    },
    plan(name, filter, o = {}) {
      const t = tableOf(s, name);
      const { sql, params } = entryQuery(t, filter, o) ?? selectSql(t, o.skip ? "rowid" : "doc", filter, o);
      return (s.conn.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as Array<{ detail: string }>).map((r) => r.detail);
    },
  };
}

function tableOf(s: Shared, name: string, packed: readonly string[] = []): TableState {
  let t = s.tables.get(name);
  if (!t) {
    if (!NAME.test(name)) throw new Error(`invalid collection name '${name}'`);
    t = { table: `c_${name}`, scalar: new Set(), unique: new Map(), tallies: [], packed: [], recent: new RecentlyInflated(), entries: [], texts: [], changes: 0, rewrites: 0, rewriteUnseen: false };
    s.ddl(`CREATE TABLE IF NOT EXISTS "${t.table}" (_id TEXT PRIMARY KEY NOT NULL, doc TEXT NOT NULL, z BLOB)`);
    // A table of a release before packing: adding a column rewrites nothing; its rows are read as they are.
    const columns = s.conn.prepare(`SELECT name FROM pragma_table_info('${t.table}')`).pluck().all() as string[];
    if (!columns.includes("z")) s.ddl(`ALTER TABLE "${t.table}" ADD COLUMN z BLOB`);
    s.tables.set(name, t);
  }
  // Handles of one table may declare packing or not (a tool or a test may open it plainly): rows are read either way.
  for (const f of packed) if (!t.packed.includes(f)) t.packed.push(f);
  return t;
}

function selectSql(t: TableState, columns: string, filter: Filter, o: FindOptions): { sql: string; params: unknown[] } {
  const where = whereOf(filter, t.scalar);
  if (o.hint !== undefined && !NAME.test(o.hint)) throw new Error(`invalid index name '${o.hint}'`);
  // INDEXED BY fails the query outright when that index cannot serve it, rather than scanning.
  const indexed = o.hint === undefined ? "" : ` INDEXED BY "${t.table}__${o.hint}"`;
  let sql = `SELECT ${columns} FROM "${t.table}"${indexed} WHERE ${where.sql}${orderBy(o.sort)}`;
  const params = [...where.params];
  if (o.limit !== undefined || o.skip) {
    sql += " LIMIT ? OFFSET ?";
    params.push(o.limit ?? -1, o.skip ?? 0);
  }
  return { sql, params };
}

/** A value as an entry column holds it: what json_extract reads for the same value in the document. */
function entryValue(v: unknown): unknown {
  if (v === undefined || v === null) return null;
  if (typeof v === "boolean") return v ? 1 : 0;
  if (typeof v === "object" && !(v instanceof Date)) return toJson(v);
  return sqlValue(v);
}

function valueAt(doc: Doc, path: string): unknown {
  let v: unknown = doc;
  for (const seg of path.split(".")) v = v && typeof v === "object" ? (v as Doc)[seg] : undefined;
  return v;
}

/** The entry rows of a document, one per distinct element of the array key (none for an empty or missing array). */
function entriesOf(ix: EntryIndex, doc: Doc): unknown[][] {
  const raw = valueAt(doc, ix.array);
  const elements = raw === undefined ? [] : [...new Set((Array.isArray(raw) ? raw : [raw]).map(entryValue))];
  return elements.map((el) => ix.keys.map(([f]) => (f === ix.array ? el : f === "_id" ? doc._id : entryValue(valueAt(doc, f)))));
}

const entryColumns = (ix: EntryIndex) => ix.keys.map((_, i) => `k${i}`);

/**
 * The ids query of a find that a multikey index serves: its filter is plain equality on exactly
 * the index's leading keys (the array key among them), and its sort, all one direction, the keys
 * that follow. Anything else is answered from the documents (the array key then costs a look into
 * each candidate's array).
 */
function entryQuery(t: TableState, filter: Filter, o: FindOptions): { sql: string; params: unknown[] } | undefined {
  const fields = Object.keys(filter);
  if (t.entries.length === 0 || fields.length === 0) return undefined;
  const plain = (v: unknown) => typeof v === "string" || typeof v === "number" || typeof v === "boolean";
  if (!fields.every((f) => !f.startsWith("$") && plain(filter[f]))) return undefined;
  const sort = Object.entries(o.sort ?? {});
  if (sort.some(([, d]) => d !== sort[0][1])) return undefined;
  for (const ix of t.entries) {
    if (o.hint !== undefined && o.hint !== ix.name) continue;
    const lead = ix.keys.slice(0, fields.length).map(([f]) => f);
    if (lead.length !== fields.length || !lead.includes(ix.array) || fields.some((f) => !lead.includes(f))) continue;
    const next = ix.keys.slice(fields.length, fields.length + sort.length);
    if (next.length < sort.length || next.some(([f], j) => f !== sort[j][0])) continue;
    const cols = entryColumns(ix);
    const id = cols[ix.keys.findIndex(([f]) => f === "_id")];
    const order = sort.length ? ` ORDER BY ${sort.map((_, j) => `${cols[fields.length + j]}${sort[0][1] === -1 ? " DESC" : ""}`).join(", ")}` : "";
    let sql = `SELECT ${id} FROM "${ix.table}" WHERE ${lead.map((_, i) => `${cols[i]} = ?`).join(" AND ")}${order}`;
    const params = lead.map((f) => entryValue(filter[f]));
    if (o.limit !== undefined || o.skip) {
      sql += " LIMIT ? OFFSET ?";
      params.push(o.limit ?? -1, o.skip ?? 0);
    }
    return { sql, params };
  }
  return undefined;
}

function project(doc: Doc, projection: Record<string, 1>): Doc {
  const out: Doc = { _id: doc._id };
  for (const path of Object.keys(projection)) {
    const v = valueAt(doc, path);
    if (v === undefined) continue;
    const segments = path.split(".");
    let at = out;
    for (const seg of segments.slice(0, -1)) at = (at[seg] ??= {}) as Doc;
    at[segments[segments.length - 1]] = v;
  }
  return out;
}

function collectionOn<D extends { _id: string }>(s: Shared, name: string, packed: readonly string[]): DocumentCollection<D> {
  const t = tableOf(s, name, packed);
  const table = `"${t.table}"`;
  s.acquire();
  let closed = false;
  const write = <T>(work: () => T, durable?: boolean) => s.write(work, durable, t);

  /** A unique index's refusal as the port's error naming the field. */
  function duplicate(e: unknown): unknown {
    if (!isSqliteError(e) || !e.code.startsWith("SQLITE_CONSTRAINT")) return e;
    if (e.message.includes(`${t.table}._id`)) return new DuplicateKeyError("_id");
    const index = /index '([^']+)'/.exec(e.message)?.[1];
    return new DuplicateKeyError(index ? t.unique.get(index) : undefined);
  }

  /** Moves the tallies from the document as it was to the document as it is (either may be absent). */
  function adjustTallies(before: Doc | undefined, after: Doc | undefined): void {
    if (!t.tallies.length) return;
    const upsert = s.stmt("INSERT INTO _tallies (tbl, name, grp, n) VALUES (?, ?, ?, ?) ON CONFLICT DO UPDATE SET n = n + excluded.n");
    for (const spec of t.tallies) {
      // An insert (every article of an import) only adds: no map of deltas to build.
      if (!before && after) {
        const groups = spec.groups(after);
        groups.forEach((g, i) => groups.indexOf(g) === i && upsert.run(t.table, spec.name, g, 1));
        continue;
      }
      const delta = new Map<string, number>();
      if (before) for (const g of new Set(spec.groups(before))) delta.set(g, (delta.get(g) ?? 0) - 1);
      if (after) for (const g of new Set(spec.groups(after))) delta.set(g, (delta.get(g) ?? 0) + 1);
      for (const [g, n] of delta) if (n !== 0) upsert.run(t.table, spec.name, g, n);
    }
  }

  /** The filter, refused when it names a packed field (the JSON column does not hold it). */
  function unpacked(filter: Filter): Filter {
    if (t.packed.length && names(filter, t.packed)) throw new Error(`a filter on ${t.table} names a packed field (${t.packed.join(", ")})`);
    return filter;
  }

  function insertNow(doc: Doc): void {
    try {
      const stored = storedOf(doc, t.packed);
      const { lastInsertRowid } = s.stmt(`INSERT INTO ${table} (_id, doc, z) VALUES (?, ?, ?)`).run(doc._id, stored.doc, deflated(stored.packed));
      moveText(s, t.texts, lastInsertRowid, undefined, doc);
    } catch (e) {
      throw duplicate(e);
    }
    adjustTallies(undefined, doc);
    moveEntries(undefined, doc);
  }

  /** Moves a document's entries in the multikey indexes from what it was to what it is (either may be absent). */
  function moveEntries(before: Doc | undefined, after: Doc | undefined, indexes = t.entries): void {
    for (const ix of indexes) {
      const old = before ? entriesOf(ix, before) : [];
      const now = after ? entriesOf(ix, after) : [];
      const key = (row: unknown[]) => JSON.stringify(row);
      const had = new Set(old.map(key));
      const keep = new Set(now.map(key));
      const cols = entryColumns(ix);
      for (const row of old) if (!keep.has(key(row))) s.stmt(`DELETE FROM "${ix.table}" WHERE ${cols.map((c) => `${c} = ?`).join(" AND ")}`).run(...row);
      for (const row of now) if (!had.has(key(row))) s.stmt(`INSERT OR IGNORE INTO "${ix.table}" (${cols.join(", ")}) VALUES (${cols.map(() => "?").join(", ")})`).run(...row);
    }
  }

  /** Applies `update` to the matching documents (at most one unless `multi`); answers the documents as written. */
  function updateNow(filter: Filter, update: Update, multi: boolean): { matched: number; modified: number; docs: Doc[] } {
    const where = whereOf(unpacked(filter), t.scalar);
    const rows = s.stmt(`SELECT rowid AS r, _id, doc, z FROM ${table} WHERE ${where.sql}${multi ? "" : " LIMIT 1"}`).all(...where.params) as Row[];
    let modified = 0;
    const docs: Doc[] = [];
    for (const row of rows) {
      const packedBefore = inflated(row.z);
      const after = applyUpdate(docOf(row, packedBefore), update);
      const stored = storedOf(after, t.packed);
      docs.push(docOf({ _id: after._id as string, doc: stored.doc }, stored.packed));
      // Most updates change a status, not the text: its deflated bytes stay as they are.
      const samePacked = stored.packed === packedBefore;
      if (stored.doc === row.doc && samePacked) continue;
      try {
        if (samePacked) s.stmt(`UPDATE ${table} SET doc = ? WHERE rowid = ?`).run(stored.doc, row.r);
        else s.stmt(`UPDATE ${table} SET doc = ?, z = ? WHERE rowid = ?`).run(stored.doc, deflated(stored.packed), row.r);
      } catch (e) {
        throw duplicate(e);
      }
      modified++;
      // applyUpdate changed the document it was given: the tallies and entries need the row as it was.
      if (t.tallies.length || t.entries.length || t.texts.length) {
        const before = docOf(row, packedBefore);
        adjustTallies(before, docs[docs.length - 1]);
        moveEntries(before, docs[docs.length - 1]);
        moveText(s, t.texts, row.r, before, docs[docs.length - 1]);
      }
    }
    return { matched: rows.length, modified, docs };
  }

  /**
   * A read by primary key whose other conditions are equalities on indexed (single-valued)
   * fields: the row is found by its key and the rest is checked on the parsed document, so the
   * engine never parses the stored JSON for a `json_extract` (a third of a by-id read's time).
   * Answers undefined for any other filter.
   */
  function byKey(filter: Filter): D | null | undefined {
    const id = filter._id;
    if (typeof id !== "string") return undefined;
    for (const key in filter) {
      if (key === "_id") continue;
      const v = filter[key];
      if (!t.scalar.has(key) || key.includes(".") || !(typeof v === "string" || typeof v === "number" || typeof v === "boolean")) return undefined;
    }
    const row = s.pointStmt(`SELECT _id, doc, z FROM ${table} WHERE _id = ?`).get(id) as Row | undefined;
    if (row === undefined) return null;
    const doc = docOf(row, t.recent.packedOf(id, row.z));
    for (const key in filter) if (key !== "_id" && doc[key] !== filter[key]) return null;
    return doc as D;
  }

  /** Whether a find needs the packed fields: not when its projection or `omit` leaves them all out. */
  function wantsPacked(o: FindOptions): boolean {
    if (!t.packed.length) return false;
    if (o.projection) return Object.keys(o.projection).some((k) => t.packed.includes(k.split(".")[0]));
    return !(o.omit && t.packed.every((f) => o.omit!.includes(f)));
  }

  function findNow(filter: Filter, o: FindOptions): D[] {
    unpacked(filter);
    if (!o.skip && !o.projection && !o.omit && (o.limit === undefined || o.limit > 0)) {
      const one = byKey(filter);
      if (one !== undefined) return one ? [one] : [];
    }
    const packed = wantsPacked(o);
    const columns = packed ? "_id, doc, z" : "_id, doc";
    let rows: Row[];
    const entries = entryQuery(t, filter, o);
    if (entries) {
      // The page's ids from the entries (a deep page walks them alone), then its documents.
      const byId = s.readStmt(`SELECT ${columns} FROM ${table} WHERE _id = ?`);
      rows = (s.readStmt(entries.sql, true).all(...entries.params) as string[]).map((id) => byId.get(id) as Row);
    } else if (o.skip) {
      // A deep page: walk the index for the row ids only (covering, no documents read), then fetch the page.
      const ids = selectSql(t, "rowid", filter, o);
      const byRow = s.readStmt(`SELECT ${columns} FROM ${table} WHERE rowid = ?`);
      rows = (s.readStmt(ids.sql, true).all(...ids.params) as number[]).map((r) => byRow.get(r) as Row);
    } else {
      const q = selectSql(t, columns, filter, o);
      rows = s.readStmt(q.sql).all(...q.params) as Row[];
    }
    const docs = rows.map((row) => docOf(row, packed ? t.recent.packedOf(row._id, row.z) : null));
    // Rows from before packing hold the fields in their JSON: left out all the same, as MongoDB leaves them out.
    if (o.omit && !o.projection) for (const d of docs) for (const f of o.omit) delete d[f];
    return (o.projection ? docs.map((d) => project(d, o.projection!)) : docs) as D[];
  }

  return {
    insertOne: (doc) => s.write(() => insertNow(doc as Doc), true, t, true),
    changes: () => t.changes,
    rewrites: () => t.rewrites,
    findOne: (filter) => s.read(() => findNow(filter, { limit: 1 })[0] ?? null),
    find: (filter, o = {}) => s.read(() => findNow(filter, o)),
    count: (filter) =>
      s.read(() => {
        const where = whereOf(unpacked(filter), t.scalar);
        return s.readStmt(`SELECT count(*) FROM ${table} WHERE ${where.sql}`, true).get(...where.params) as number;
      }),
    async updateOne(filter, update) {
      const { matched, modified } = await write(() => updateNow(filter, update, false));
      return { matched, modified };
    },
    async findOneAndUpdate(filter, update, o) {
      const r = await write(() => updateNow(filter, update, false), o?.durable ?? true);
      return (r.docs[0] as D | undefined) ?? null;
    },
    async updateMany(filter, update) {
      const { matched, modified } = await write(() => updateNow(filter, update, true));
      return { matched, modified };
    },
    async bulkUpdate(ops) {
      // Each in its own savepoint of the same transaction: one refused does not undo the others.
      const results = await Promise.all(ops.map((op) => write(() => updateNow(op.filter, op.update, false))));
      return { matched: results.reduce((n, r) => n + r.matched, 0) };
    },
    upsertOne: (key, update, o) =>
      write(() => {
        if (updateNow(key, update, false).matched > 0) return;
        const doc = upsertedDoc(key, update);
        doc._id ??= randomBytes(12).toString("hex");
        insertNow(doc);
      }, o?.durable ?? true),
    deleteMany: (filter) =>
      write(() => {
        const where = whereOf(unpacked(filter), t.scalar);
        if (!t.tallies.length && !t.entries.length && !t.texts.length) return s.stmt(`DELETE FROM ${table} WHERE ${where.sql}`).run(...where.params).changes;
        const rows = s.stmt(`SELECT rowid AS r, _id, doc FROM ${table} WHERE ${where.sql}`).all(...where.params) as Row[];
        for (const row of rows) {
          s.stmt(`DELETE FROM ${table} WHERE rowid = ?`).run(row.r);
          dropText(s, t.texts, row.r);
          const before = docOf(row);
          adjustTallies(before, undefined);
          moveEntries(before, undefined);
        }
        return rows.length;
      }),
    async ensureTally(spec) {
      const before = t.tallies.find((x) => x.name === spec.name);
      t.tallies = [...t.tallies.filter((x) => x !== before), spec];
      try {
        await write(() => {
          if (s.stmt("SELECT 1 FROM _tally_names WHERE tbl = ? AND name = ?", true).get(t.table, spec.name)) return;
          // First declared on a collection that may already hold documents: count them once.
          const counts = new Map<string, number>();
          for (const row of s.stmt(`SELECT _id, doc FROM ${table}`).iterate() as Iterable<Row>) {
            for (const g of new Set(spec.groups(docOf(row)))) counts.set(g, (counts.get(g) ?? 0) + 1);
          }
          s.stmt("DELETE FROM _tallies WHERE tbl = ? AND name = ?").run(t.table, spec.name);
          for (const [g, n] of counts) s.stmt("INSERT INTO _tallies (tbl, name, grp, n) VALUES (?, ?, ?, ?)").run(t.table, spec.name, g, n);
          s.stmt("INSERT INTO _tally_names (tbl, name) VALUES (?, ?)").run(t.table, spec.name);
        });
      } catch (e) {
        t.tallies = t.tallies.filter((x) => x !== spec);
        if (before) t.tallies.push(before);
        throw e;
      }
    },
    tally: (tallyName, group) => s.read(() => (s.readStmt("SELECT n FROM _tallies WHERE tbl = ? AND name = ? AND grp = ?", true).get(t.table, tallyName, group) as number | undefined) ?? 0),
    tallies: (tallyName) =>
      s.read(() => {
        const rows = s.readStmt("SELECT grp, n FROM _tallies WHERE tbl = ? AND name = ? AND n > 0").all(t.table, tallyName) as Array<{ grp: string; n: number }>;
        return new Map(rows.map((r) => [r.grp, r.n]));
      }),
    async ensureIndex(spec: IndexSpec, o: IndexOptions = {}) {
      const keys = Object.entries(spec.keys);
      if (keys.length === 0 || (keys.length === 1 && keys[0][0] === "_id")) return;
      if (!NAME.test(spec.name)) throw new Error(`invalid index name '${spec.name}'`);
      if (o.multikey !== undefined) return ensureEntries(spec, o.multikey);
      const index = `${t.table}__${spec.name}`;
      const columns = keys.map(([f, dir]) => `${fieldExpr(f)}${dir === -1 ? " DESC" : ""}`).join(", ");
      // Sparse: documents without the (first) field are left out, as MongoDB leaves them out.
      const partial = o.sparse ? ` WHERE ${fieldExpr(keys[0][0])} IS NOT NULL` : "";
      const create = `CREATE ${o.unique ? "UNIQUE " : ""}INDEX "${index}" ON ${table} (${columns})${partial}`;
      await write(() => {
        const existing = s.conn.prepare("SELECT sql FROM sqlite_master WHERE type = 'index' AND name = ?").pluck().get(index) as string | undefined;
        if (existing === create) return;
        // Same name, other keys or options (a newer release changed the index): rebuild it.
        if (existing !== undefined) s.conn.exec(`DROP INDEX "${index}"`);
        s.conn.exec(create);
      });
      for (const [f] of keys) if (f !== "_id") t.scalar.add(f);
      if (o.unique) t.unique.set(index, keys[0][0]);
    },
    ensureTextIndex,
    searchText: (index, words, scope, filter, o) =>
      s.read(() => {
        const ix = t.texts.find((x) => x.spec.name === index);
        if (!ix) throw new Error(`no text index '${index}' on ${t.table}`);
        const where = Object.keys(filter).length ? whereOf(unpacked(filter), t.scalar) : undefined;
        const { count, capped, rowids } = searchPage(s, ix, t.table, words, scope, where, o.limit, o.skip, o);
        const packed = wantsPacked({ omit: o.omit });
        const byRow = s.readStmt(`SELECT _id, doc${packed ? ", z" : ""} FROM ${table} WHERE rowid = ?`);
        // A row the index names but the table lacks (its rowids renumbered under it: docs/operations.md) is left out, not a failed read.
        const docs = rowids.flatMap((r) => {
          const row = byRow.get(r) as Row | undefined;
          if (!row) return [];
          const d = docOf(row, packed ? t.recent.packedOf(row._id, row.z) : null);
          for (const f of o.omit ?? []) delete d[f];
          return [d as D];
        });
        return { count, capped, docs };
      }),
    async fillDerived(spec: DerivedFill, page) {
      const fields = Object.entries(spec.fields);
      const kept = [...t.tallies.flatMap((x) => x.fields ?? [""]), ...t.entries.flatMap((x) => x.keys.map(([f]) => f)), ...(t.texts.length ? [""] : [])];
      // A tally without named fields, or a text index, might read any field: the fill would leave them stale.
      const stale = fields.find(([f]) => kept.includes(f) || kept.includes(""));
      if (stale) throw new Error(`fillDerived: '${stale[0]}' of ${t.table} may be in a tally, multikey or text index; fill it with updates`);
      // The factor written out (checked a finite number): an integer one keeps integer values integers, as a bound parameter (a double) would not.
      if (fields.some(([, { times }]) => !Number.isFinite(times))) throw new Error("fillDerived: the factor must be a finite number");
      const sets = fields.map(([f, { from, times }]) => `${jsonPath(f)}, ${fieldExpr(from)} * ${times}`).join(", ");
      const where = whereOf({ [spec.unless]: { $exists: false } }, t.scalar);
      return write(() => {
        const last = s.stmt(`SELECT max(_id) FROM (SELECT _id FROM ${table} WHERE _id > ? ORDER BY _id LIMIT ?)`, true).get(page.after, page.limit) as string | null;
        if (last === null) return { modified: 0 };
        const { changes } = s
          .stmt(`UPDATE ${table} SET doc = json_set(doc, ${sets}) WHERE _id > ? AND _id <= ? AND ${where.sql}`)
          .run(page.after, last, ...where.params);
        return { last, modified: changes };
      });
    },
    async dropIndex(indexName) {
      if (!NAME.test(indexName)) throw new Error(`invalid index name '${indexName}'`);
      t.entries = t.entries.filter((x) => x.name !== indexName);
      await write(() => {
        s.conn.exec(`DROP INDEX IF EXISTS "${t.table}__${indexName}"`);
        s.conn.exec(`DROP TABLE IF EXISTS "${t.table}__${indexName}__entries"`);
      });
    },
    async close() {
      if (closed) return;
      closed = true;
      await s.release();
    },
  };

  /**
   * A full-text index: its FTS5 table, made (or remade, for a changed spec) in one write with the
   * mark that the collection's existing rows are still to be indexed; those are indexed in the
   * background, a page per transaction, and new writes keep the index from the first one on.
   */
  async function ensureTextIndex(spec: TextIndexSpec): Promise<{ complete: Promise<void> }> {
    const ix = textIndexOf(t.table, spec);
    const create = createSql(ix);
    const before = t.texts;
    try {
      await write(() => {
        t.texts = [...before.filter((x) => x.spec.name !== spec.name), ix];
        s.conn.exec(BACKFILL_TABLE);
        const tables = tablesOf(ix);
        const existing = tables.map((name) => s.conn.prepare("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?").pluck().get(name) as string | undefined);
        if (existing.every((sql, i) => sql === create[i])) {
          keepScopeTerms(s, ix, () => s.stmt(`SELECT DISTINCT ${fieldExpr(spec.scope)} FROM ${table}`, true).all());
          return;
        }
        tables.forEach((name, i) => existing[i] !== undefined && s.conn.exec(`DROP TABLE "${name}"`));
        for (const sql of create) s.conn.exec(sql);
        if (s.stmt(`SELECT 1 FROM ${table} LIMIT 1`, true).get() !== undefined) {
          s.stmt("INSERT OR REPLACE INTO _text_backfill (tbl, name, after) VALUES (?, ?, ?)").run(t.table, spec.name, -1);
        }
      });
    } catch (e) {
      t.texts = before;
      throw e;
    }
    const complete = (async () => {
      // Not durable: a page lost in a power failure is indexed again from the stored position.
      while (!closed && (await write(() => backfillPage(s, ix, t.table, (row) => docOf(row, inflated(row.z))), false))) {
        await new Promise((resolve) => setImmediate(resolve));
      }
      // Then its segments merged, should the fill or earlier writes have left many (sqlite-search.ts mergeStep).
      const going = new Set<string>();
      while (!closed && (await write(() => mergeStep(s, ix, going), false))) {
        await new Promise((resolve) => setImmediate(resolve));
      }
    })();
    // Closing the store mid-way leaves the rest to the next start.
    complete.catch(() => undefined);
    return { complete };
  }

  /** A multikey index: its table of entries, filled once from the documents when new or changed (an upgraded database). */
  async function ensureEntries(spec: IndexSpec, array: string): Promise<void> {
    const keys = Object.entries(spec.keys);
    if (!keys.some(([f]) => f === "_id")) keys.push(["_id", 1]);
    const ix: EntryIndex = { name: spec.name, table: `${t.table}__${spec.name}__entries`, keys, array };
    const cols = entryColumns(ix);
    // Ascending columns: SQLite walks the key backwards for a descending sort.
    const create = `CREATE TABLE "${ix.table}" (${cols.join(", ")}, PRIMARY KEY (${cols.join(", ")})) WITHOUT ROWID`;
    const before = t.entries;
    try {
      await write(() => {
        // Kept from here on by every later write, in this transaction too.
        t.entries = [...before.filter((x) => x.name !== spec.name), ix];
        const existing = s.conn.prepare("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?").pluck().get(ix.table) as string | undefined;
        if (existing === create) return;
        if (existing !== undefined) s.conn.exec(`DROP TABLE "${ix.table}"`);
        s.conn.exec(create);
        // By pages of ids: a statement cannot write while another one still iterates.
        for (let after = ""; ; ) {
          const page = s.stmt(`SELECT _id, doc FROM ${table} WHERE _id > ? ORDER BY _id LIMIT 500`).all(after) as Row[];
          for (const row of page) moveEntries(undefined, docOf(row), [ix]);
          if (page.length < 500) break;
          after = page[page.length - 1]._id;
        }
      });
    } catch (e) {
      t.entries = before;
      throw e;
    }
    for (const [f] of keys) if (f !== "_id" && f !== array) t.scalar.add(f);
  }
}

/** One collection of its own database (in memory without a filename); closing it closes the database. */
export async function openSqliteCollection<D extends { _id: string }>(name: string, opts: SqliteDatabaseOptions): Promise<DocumentCollection<D>> {
  const db = await openSqliteDatabase(opts);
  const col = db.collection<D>(name);
  await db.close();
  return col;
}
