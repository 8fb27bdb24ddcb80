// The connection of the embedded driver that all collections of one database file share, one per
// file (sqlite-collection.ts makes the collections on it): its group commit, its durability, its
// reading snapshot, its checkpoints and its prepared statements.
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
import { closeSync, fdatasync, fsyncSync, mkdirSync, openSync, readSync } from "node:fs";
import { endianness } from "node:os";
import { dirname } from "node:path";
import { DuplicateKeyError } from "./collection.js";
import { StorageError, storageErrorFromFs, storageErrorFromSqlite } from "./errors.js";
import type { TableState } from "./sqlite-table.js";

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

const STATEMENT_CACHE = 500;
/** The write-ahead log is copied into the database and emptied once it holds this much. */
const CHECKPOINT_BYTES = 8 * 1024 * 1024;

/**
 * Frames (pages) the write-ahead log holds now, read from its open `-shm` file: the wal-index
 * header's `mxFrame`, bytes 16-19, in the machine's byte order (sqlite.org/walformat.html).
 */
export function walFrames(shmFd: number): number {
  const b = Buffer.alloc(4);
  readSync(shmFd, b, 0, 4, 16);
  return endianness() === "LE" ? b.readUInt32LE(0) : b.readUInt32BE(0);
}

/** Open databases by file, so the stores of one service share a connection and its group commit. */
export const openFiles = new Map<string, Shared>();

export class Shared {
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
   * Bytes of frames the log holds now (walFrames). The log's file size does not tell once it is
   * restarted rather than truncated: it keeps its size.
   */
  private logBytes(): number {
    this.shmFd ??= openSync(`${this.key}-shm`, "r");
    this.frameBytes ||= 24 + (this.conn.pragma("page_size", { simple: true }) as number);
    return walFrames(this.shmFd) * this.frameBytes;
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
