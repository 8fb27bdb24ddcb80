// Embedded driver: document collections in one SQLite database file per
// service (better-sqlite3). A collection is a table of JSON documents keyed
// by `_id`; its indexes are expression indexes on the fields' JSON paths, and
// filters are translated to SQL over the same expressions (sqlite-filter.ts)
// so queries page through indexes instead of loading documents.
//
// The driver's parts: the connection a database file's collections share, with its group commit
// and durability (sqlite-database.ts); a collection's table (sqlite-table.ts); a document's stored
// form with its packed fields (sqlite-packed-text.ts); multikey indexes (sqlite-entries.ts);
// full-text indexes (sqlite-search.ts). This file makes the collections on them.
import { isSqliteError } from "./sqlite-binding.js";
import { randomBytes } from "node:crypto";
import { resolve } from "node:path";
import { DuplicateKeyError, type DerivedFill, type DocumentCollection, type Filter, type FindOptions, type IndexOptions, type IndexSpec, type TextIndexSpec, type Update } from "./collection.js";
import { applyUpdate, upsertedDoc } from "./document-update.js";
import { fieldExpr, jsonPath, whereOf } from "./sqlite-filter.js";
import { BACKFILL_TABLE, backfillPage, createSql, dropText, keepScopeTerms, mergeStep, moveText, searchPage, tablesOf, textIndexOf } from "./sqlite-search.js";
import { openFiles, Shared } from "./sqlite-database.js";
import { entriesOf, entryColumns, entryQuery, valueAt, type EntryIndex } from "./sqlite-entries.js";
import { deflated, docOf, inflated, names, storedOf, type Doc, type Row } from "./sqlite-packed-text.js";
import { NAME, selectSql, tableOf } from "./sqlite-table.js";

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

/** A multikey index entry's identity, to compare an entry before and after a write. */
const entryKey = (row: unknown[]): string => JSON.stringify(row);

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
      const had = new Set(old.map(entryKey));
      const keep = new Set(now.map(entryKey));
      const cols = entryColumns(ix);
      for (const row of old) if (!keep.has(entryKey(row))) s.stmt(`DELETE FROM "${ix.table}" WHERE ${cols.map((c) => `${c} = ?`).join(" AND ")}`).run(...row);
      for (const row of now) if (!had.has(entryKey(row))) s.stmt(`INSERT OR IGNORE INTO "${ix.table}" (${cols.join(", ")}) VALUES (${cols.map(() => "?").join(", ")})`).run(...row);
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
