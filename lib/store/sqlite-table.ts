// A collection's table in the embedded driver: what is known about it, shared by every handle on
// it (the database connection keeps one per table: sqlite-database.ts), the table made on first
// use, and the SELECT a find runs on it.
import type { Filter, FindOptions, TallySpec } from "./collection.js";
import type { Shared } from "./sqlite-database.js";
import type { EntryIndex } from "./sqlite-entries.js";
import { orderBy, whereOf } from "./sqlite-filter.js";
import { RecentlyInflated } from "./sqlite-packed-text.js";
import type { TextIndex } from "./sqlite-search.js";

/** What a collection's table knows, shared by every handle on it. */
export interface TableState {
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

/** Collection and index names: written into SQL, so letters, digits and `_` only. */
export const NAME = /^[A-Za-z][A-Za-z0-9_]*$/;

export function tableOf(s: Shared, name: string, packed: readonly string[] = []): TableState {
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

export function selectSql(t: TableState, columns: string, filter: Filter, o: FindOptions): { sql: string; params: unknown[] } {
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
