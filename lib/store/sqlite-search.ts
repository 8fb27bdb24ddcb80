// Full-text indexes of the embedded driver (DocumentCollection.ensureTextIndex/searchText):
// an FTS5 table per index, contentless (the documents keep the text, deflated; the index holds
// only the words), its rowid the document row's rowid. sqlite-collection.ts moves a document's
// entry in the same savepoint as the document's own write, so the index never disagrees with
// what a committed read sees.
//
// Choices that keep it small and fast at a million articles:
// - detail=column: no word positions (queries are words in any order, never phrases); a third
//   of the size of the full detail; a column filter still tells a title match from a text match.
// - no prefix indexes: a prefix query reads the few terms that start with it from the term
//   b-tree; a prefix index would store every doclist again.
// - unicode61 with remove_diacritics 2: folds as lib/search-words.ts folds ("bucher" = "Bücher").
import type Database from "better-sqlite3";
import type { TextIndexSpec } from "./collection.js";

export interface TextIndex {
  spec: TextIndexSpec;
  /** The FTS5 table. */
  table: string;
}

/** What the index code needs of the driver's connection pair. */
export interface Statements {
  /** A statement on the writing connection. */
  stmt(sql: string, pluck?: boolean): Database.Statement;
  /** A statement on the reading connection (the durable snapshot). */
  readStmt(sql: string, pluck?: boolean): Database.Statement;
}

type Doc = Record<string, unknown>;

/** Rows an upgrade indexes per transaction: small, so the writes and reads around it wait little. */
export const BACKFILL_PAGE = 250;

export const BACKFILL_TABLE = "CREATE TABLE IF NOT EXISTS _text_backfill (tbl TEXT NOT NULL, name TEXT NOT NULL, after INTEGER NOT NULL, PRIMARY KEY (tbl, name)) WITHOUT ROWID";

export function textIndexOf(collectionTable: string, spec: TextIndexSpec): TextIndex {
  for (const c of spec.columns) if (!/^[a-z][a-z0-9_]*$/.test(c)) throw new Error(`invalid text index column '${c}'`);
  if (!spec.columns.includes(spec.rankColumn)) throw new Error(`rank column '${spec.rankColumn}' is not a column of the text index`);
  return { spec, table: `${collectionTable}__${spec.name}__fts` };
}

/** The statement that creates the index's table: compared with the stored one to tell a changed spec. */
export const createSql = (ix: TextIndex): string =>
  `CREATE VIRTUAL TABLE "${ix.table}" USING fts5(${ix.spec.columns.join(", ")}, content='', contentless_delete=1, detail=column, tokenize='unicode61 remove_diacritics 2')`;

/** Moves a document's entry from what it was to what it is (either absent), in the caller's savepoint. */
export function moveText(s: Statements, indexes: readonly TextIndex[], rowid: number | bigint, before: Doc | undefined, after: Doc | undefined): void {
  for (const ix of indexes) {
    const was = before ? ix.spec.textOf(before) : null;
    const now = after ? ix.spec.textOf(after) : null;
    if (was && now && was.every((v, i) => v === now[i])) continue;
    if (was) s.stmt(`DELETE FROM "${ix.table}" WHERE rowid = ?`).run(rowid);
    if (now) insertText(s, ix, rowid, now);
  }
}

function insertText(s: Statements, ix: TextIndex, rowid: number | bigint, values: string[]): void {
  const cols = ix.spec.columns;
  s.stmt(`INSERT INTO "${ix.table}" (rowid, ${cols.join(", ")}) VALUES (?, ${cols.map(() => "?").join(", ")})`).run(rowid, ...values);
}

/** A removed row leaves every index. */
export function dropText(s: Statements, indexes: readonly TextIndex[], rowid: number | bigint): void {
  for (const ix of indexes) s.stmt(`DELETE FROM "${ix.table}" WHERE rowid = ?`).run(rowid);
}

/**
 * One page of an upgrade's fill: the rows after the stored position, each indexed as it is now
 * (its entry replaced, should a write since the index existed have made one). Answers whether
 * rows remain; the position goes once the collection has been walked.
 */
export function backfillPage(s: Statements, ix: TextIndex, collectionTable: string, docOf: (row: { r: number; _id: string; doc: string; z: Buffer | null }) => Doc): boolean {
  const after = s.stmt("SELECT after FROM _text_backfill WHERE tbl = ? AND name = ?", true).get(collectionTable, ix.spec.name) as number | undefined;
  if (after === undefined) return false;
  const rows = s.stmt(`SELECT rowid AS r, _id, doc, z FROM "${collectionTable}" WHERE rowid > ? ORDER BY rowid LIMIT ${BACKFILL_PAGE}`).all(after) as Array<{ r: number; _id: string; doc: string; z: Buffer | null }>;
  for (const row of rows) {
    s.stmt(`DELETE FROM "${ix.table}" WHERE rowid = ?`).run(row.r);
    const values = ix.spec.textOf(docOf(row));
    if (values) insertText(s, ix, row.r, values);
  }
  if (rows.length < BACKFILL_PAGE) {
    s.stmt("DELETE FROM _text_backfill WHERE tbl = ? AND name = ?").run(collectionTable, ix.spec.name);
    return false;
  }
  s.stmt("UPDATE _text_backfill SET after = ? WHERE tbl = ? AND name = ?").run(rows[rows.length - 1].r, collectionTable, ix.spec.name);
  return true;
}

/** FTS5's query for the words: each a prefix, all of them, in any column. */
export const matchOf = (words: readonly string[]): string => words.map((w) => `"${w.replace(/"/g, '""')}"*`).join(" AND ");

/**
 * The matching rows of one page, with the number of all matches: the rows whose rank column
 * holds more of the words first (one column-filtered match per word, each read once into a
 * set), then `order`. The page's rows only are read whole afterwards: the ranking carries row
 * ids, not documents. `where` and `order` are SQL over the collection's columns.
 */
export function searchPage(
  s: Statements,
  ix: TextIndex,
  collectionTable: string,
  words: readonly string[],
  where: { sql: string; params: unknown[] },
  order: string,
  limit: number,
  skip: number,
): { count: number; rowids: number[] } {
  const fts = `"${ix.table}"`;
  const matched = `(SELECT rowid AS m FROM ${fts} WHERE ${fts} MATCH ?) JOIN "${collectionTable}" ON rowid = m WHERE ${where.sql}`;
  const params = [matchOf(words), ...where.params];
  const score = words.map(() => `(m IN (SELECT rowid FROM ${fts} WHERE ${fts} MATCH ?))`).join(" + ");
  const ranked = words.map((w) => `${ix.spec.rankColumn} : ${matchOf([w])}`);
  const rows = s.readStmt(`SELECT m, count(*) OVER () AS n FROM ${matched} ORDER BY ${score} DESC${order ? `, ${order}` : ""} LIMIT ? OFFSET ?`).all(...params, ...ranked, limit, skip) as Array<{ m: number; n: number }>;
  // Past the last page: no row carries the count.
  const count = rows.length ? rows[0].n : (s.readStmt(`SELECT count(*) FROM ${matched}`, true).get(...params) as number);
  return { count, rowids: rows.map((r) => r.m) };
}
