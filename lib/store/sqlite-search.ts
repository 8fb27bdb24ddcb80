// Full-text indexes of the embedded driver (DocumentCollection.ensureTextIndex/searchText):
// an FTS5 table per index, contentless (the documents keep the text, deflated; the index holds
// only the words), its rowid the document row's rowid. sqlite-collection.ts moves a document's
// entry in the same savepoint as the document's own write, so the index never disagrees with
// what a committed read sees.
//
// Choices that keep it small and fast at a million articles:
// - detail=none: no word positions nor columns (queries are words in any order, never phrases):
//   240 bytes per 1,000-character article, against 510 with detail=column. Which words the rank
//   column (the title) holds comes from a second, small table of that column alone.
// - a query's last word may be a prefix (lib/search-words.ts queryWords). FTS5 answers a prefix
//   by reading every document list of every word it begins, whole, before intersecting: a common
//   word's list is most of the archive. So the words the index holds are also kept in a small
//   table of their own (`terms`), and a prefix that begins few of them is asked as those words
//   OR'ed, which FTS5 intersects as it does whole words (skipping through each list). A prefix
//   that begins many is left to FTS5, helped for the shortest (three letters, what a search
//   typed as it is read starts with) by a prefix index of three characters.
// - the words are cut and folded before they reach FTS5, by lib/search-words.ts as the MongoDB
//   store folds them; the table's tokenizer (ascii) only splits that at the spaces and changes
//   nothing else (it lowercases A-Z alone, and every word is lowercase already). unicode61 folds
//   a few letters otherwise ("ﬁ", fullwidth letters, "²", final sigma), and the stores would
//   then disagree on what a query finds.
// - the scope (the project) is a word of each entry, spelled so that no text's word or query's
//   prefix can be it (it starts with U+0001, a token character here and refused in any text):
//   a search intersects its words with its project's, and needs no document to tell whose a
//   match is. Without a filter beyond the project, a search reads no document but its page's.
// - ties are broken by rowid, the order the documents were stored in: known from the index,
//   where the time field would need each match's document.
import type Database from "better-sqlite3";
import { Buffer } from "node:buffer";
import { distinctWords, isPrefixWord, MIN_PREFIX_CHARS, stemOf } from "../search-words.js";
import type { TextIndexSpec } from "./collection.js";

export interface TextIndex {
  spec: TextIndexSpec;
  /** The FTS5 table of every column. */
  table: string;
  /** The FTS5 table of the rank column alone. */
  rankTable: string;
  /** Every word the index ever held (a word no longer found stays: it matches nothing). */
  termsTable: string;
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
  return { spec, table: `${collectionTable}__${spec.name}__fts`, rankTable: `${collectionTable}__${spec.name}__rank`, termsTable: `${collectionTable}__${spec.name}__terms` };
}

const SCOPE_COLUMN = "scope_word";
const fts5 = (table: string, columns: readonly string[]) =>
  `CREATE VIRTUAL TABLE "${table}" USING fts5(${columns.join(", ")}, content='', contentless_delete=1, detail=none, prefix='${PREFIX_INDEX_CHARS}', tokenize="ascii tokenchars '\u0001'")`;

/** The prefix length FTS5 keeps an index of (MIN_PREFIX_CHARS: the shortest, and widest, prefix a query asks). */
const PREFIX_INDEX_CHARS = MIN_PREFIX_CHARS;
/** Most words a prefix is asked as (OR'ed); one that begins more is left to FTS5's prefix query. */
export const MAX_PREFIX_TERMS = 32;

/** The statements that create the index's tables, in the order of tablesOf: compared with the stored ones to tell a changed spec. */
export const createSql = (ix: TextIndex): string[] => [
  fts5(ix.table, [...ix.spec.columns, SCOPE_COLUMN]),
  fts5(ix.rankTable, [ix.spec.rankColumn]),
  `CREATE TABLE "${ix.termsTable}" (term TEXT PRIMARY KEY NOT NULL) WITHOUT ROWID`,
];
export const tablesOf = (ix: TextIndex): string[] => [ix.table, ix.rankTable, ix.termsTable];

/** The scope's word: U+0001 and the value's UTF-8 in hex, one token whatever the value holds. */
const scopeWord = (value: unknown): string => `\u0001${Buffer.from(String(value ?? ""), "utf8").toString("hex")}`;

/** Moves a document's entry from what it was to what it is (either absent), in the caller's savepoint. */
export function moveText(s: Statements, indexes: readonly TextIndex[], rowid: number | bigint, before: Doc | undefined, after: Doc | undefined): void {
  for (const ix of indexes) {
    const was = before ? entryOf(ix, before) : null;
    const now = after ? entryOf(ix, after) : null;
    if (was && now && was.every((v, i) => v === now[i])) continue;
    if (was) deleteText(s, ix, rowid);
    if (now) insertText(s, ix, rowid, now);
  }
}

/** The main table's values of a document (its columns' folded words, then its scope's word); null: not indexed. */
function entryOf(ix: TextIndex, doc: Doc): string[] | null {
  const values = ix.spec.textOf(doc);
  return values && [...values.map((v) => distinctWords(v).join(" ")), scopeWord(doc[ix.spec.scope])];
}

function insertText(s: Statements, ix: TextIndex, rowid: number | bigint, values: string[]): void {
  const cols = [...ix.spec.columns, SCOPE_COLUMN];
  s.stmt(`INSERT INTO "${ix.table}" (rowid, ${cols.join(", ")}) VALUES (?, ${cols.map(() => "?").join(", ")})`).run(rowid, ...values);
  s.stmt(`INSERT INTO "${ix.rankTable}" (rowid, ${ix.spec.rankColumn}) VALUES (?, ?)`).run(rowid, values[cols.indexOf(ix.spec.rankColumn)]);
  // One statement for all the words: a row each would cost more than the FTS5 entries.
  const words = values.slice(0, ix.spec.columns.length).join(" ");
  s.stmt(`INSERT OR IGNORE INTO "${ix.termsTable}" (term) SELECT value FROM json_each(?)`).run(JSON.stringify(words.split(" ").filter(Boolean)));
}

function deleteText(s: Statements, ix: TextIndex, rowid: number | bigint): void {
  s.stmt(`DELETE FROM "${ix.table}" WHERE rowid = ?`).run(rowid);
  s.stmt(`DELETE FROM "${ix.rankTable}" WHERE rowid = ?`).run(rowid);
}

/** A removed row leaves every index. */
export function dropText(s: Statements, indexes: readonly TextIndex[], rowid: number | bigint): void {
  for (const ix of indexes) deleteText(s, ix, rowid);
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
    deleteText(s, ix, row.r);
    const values = entryOf(ix, docOf(row));
    if (values) insertText(s, ix, row.r, values);
  }
  if (rows.length < BACKFILL_PAGE) {
    s.stmt("DELETE FROM _text_backfill WHERE tbl = ? AND name = ?").run(collectionTable, ix.spec.name);
    return false;
  }
  s.stmt("UPDATE _text_backfill SET after = ? WHERE tbl = ? AND name = ?").run(rows[rows.length - 1].r, collectionTable, ix.spec.name);
  return true;
}

/** FTS5's query for one of queryWords' words; a prefix as the few words it begins (the module's comment), read from `terms`. */
function termOf(s: Statements, ix: TextIndex, w: string): string {
  const quoted = (t: string) => `"${t.replace(/"/g, '""')}"`;
  const stem = stemOf(w);
  if (!isPrefixWord(w)) return quoted(stem);
  // Every word it begins sorts between the stem and the stem followed by the last code point (none a letter or digit).
  const begun = s.readStmt(`SELECT term FROM "${ix.termsTable}" WHERE term >= ? AND term < ? ORDER BY term LIMIT ${MAX_PREFIX_TERMS + 1}`, true).all(stem, `${stem}\u{10FFFF}`) as string[];
  if (begun.length > MAX_PREFIX_TERMS) return `${quoted(stem)}*`;
  // None: the stem itself, a word no document holds.
  return begun.length ? `(${begun.map(quoted).join(" OR ")})` : quoted(stem);
}

/**
 * The matching rows of one page, with the number of all matches: the rows whose rank column
 * holds more of the words first (one match per word in the rank table, each read once into a
 * set), then the newest stored. Only with `where` (SQL over the collection's columns) is each
 * match's row read; the page's rows are read whole afterwards, by the caller.
 */
export function searchPage(
  s: Statements,
  ix: TextIndex,
  collectionTable: string,
  words: readonly string[],
  scope: string,
  where: { sql: string; params: unknown[] } | undefined,
  limit: number,
  skip: number,
): { count: number; rowids: number[] } {
  const fts = `"${ix.table}"`;
  const matching = `SELECT rowid AS m FROM ${fts} WHERE ${fts} MATCH ?`;
  const matched = where ? `(${matching}) JOIN "${collectionTable}" ON rowid = m WHERE ${where.sql}` : `(${matching})`;
  const terms = words.map((w) => termOf(s, ix, w));
  const params = [[`"${scopeWord(scope)}"`, ...terms].join(" AND "), ...(where?.params ?? [])];
  const rank = `"${ix.rankTable}"`;
  const score = words.map(() => `(m IN (SELECT rowid FROM ${rank} WHERE ${rank} MATCH ?))`).join(" + ");
  const ranked = terms;
  const rows = s.readStmt(`SELECT m, count(*) OVER () AS n FROM ${matched} ORDER BY ${score} DESC, m DESC LIMIT ? OFFSET ?`).all(...params, ...ranked, limit, skip) as Array<{ m: number; n: number }>;
  // Past the last page: no row carries the count.
  const count = rows.length ? rows[0].n : (s.readStmt(`SELECT count(*) FROM ${matched}`, true).get(...params) as number);
  return { count, rowids: rows.map((r) => r.m) };
}
