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
//   word's list is most of the archive (90 ms at a million for `this*`). So the words the index
//   holds are also kept in a small table of their own (`terms`), and a prefix is asked as the
//   words it begins, OR'ed, which FTS5 intersects as it does whole words (skipping through each
//   list, and stopping at a page's worth): up to MAX_PREFIX_TERMS of them. Three letters (what a
//   search typed as it is read starts with) that begin more than a few words are left to FTS5's
//   prefix index of three characters; a longer prefix that begins more than MAX_PREFIX_TERMS, to
//   its prefix query.
// - the page is found among the newest matches (searchPage): FTS5 walks the intersection newest
//   first and stops, instead of reading, counting and ranking every match.
// - the words are cut and folded before they reach FTS5, by lib/search-words.ts as the MongoDB
//   store folds them; the table's tokenizer (ascii) only splits that at the spaces and changes
//   nothing else (it lowercases A-Z alone, and every word is lowercase already). unicode61 folds
//   a few letters otherwise ("ﬁ", fullwidth letters, "²", final sigma), and the stores would
//   then disagree on what a query finds.
// - the scope (the project) is a word of each entry, spelled so that no text's word or query's
//   prefix can be it (it starts with U+0001, a token character here and refused in any text):
//   a search intersects its words with its project's, and needs no document to tell whose a
//   match is. Without a filter beyond the project, a search reads no document but its page's.
//   The scope words are kept in `terms` too: while the index has only ever held one scope (one
//   publisher, the embedded default's usual case), its searches skip that intersection, a walk
//   through a list of every entry (5–8 ms at a million).
// - ties are broken by rowid, the order the documents were stored in: known from the index,
//   where the time field would need each match's document.
import type Database from "better-sqlite3";
import { Buffer } from "node:buffer";
import { distinctWords, isPrefixWord, MIN_PREFIX_CHARS, stemOf } from "../search-words.js";
import type { SearchBounds, TextIndexSpec } from "./collection.js";

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
/** Most words a prefix of PREFIX_INDEX_CHARS is asked as (OR'ed); one that begins more is asked of the prefix index. */
export const MAX_INDEXED_PREFIX_TERMS = 32;
/** Most words a longer prefix is asked as (OR'ed); one that begins more is left to FTS5's prefix query. */
export const MAX_PREFIX_TERMS = 1000;

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
  // One statement for all the words, and the scope's: a row each would cost more than the FTS5 entries.
  const words = values.slice(0, ix.spec.columns.length).join(" ");
  s.stmt(`INSERT OR IGNORE INTO "${ix.termsTable}" (term) SELECT value FROM json_each(?)`).run(JSON.stringify([...words.split(" ").filter(Boolean), values[values.length - 1]]));
}

/** The scope words `terms` holds: every scope the index ever held (a scope word sorts before every text word). */
const SCOPE_TERMS = (ix: TextIndex) => `SELECT term FROM "${ix.termsTable}" WHERE term < '\u0002'`;

/**
 * An index written before `terms` kept the scopes is given them once: every scope value
 * the collection holds (`scopes`, a superset of the indexed ones, which only makes searches
 * intersect where they need not). Nothing to do for one that has them, or for an empty one.
 */
export function keepScopeTerms(s: Statements, ix: TextIndex, scopes: () => unknown[]): void {
  if (s.stmt(`${SCOPE_TERMS(ix)} LIMIT 1`, true).get() !== undefined) return;
  s.stmt(`INSERT OR IGNORE INTO "${ix.termsTable}" (term) SELECT value FROM json_each(?)`).run(JSON.stringify(scopes().map(scopeWord)));
}

/** Whether every entry of the index is of this scope: it has never held another. */
function onlyScope(s: Statements, ix: TextIndex, scope: string): boolean {
  const held = s.readStmt(`${SCOPE_TERMS(ix)} LIMIT 2`, true).all() as string[];
  return held.length === 1 && held[0] === scopeWord(scope);
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

/**
 * FTS5 writes a segment per transaction and merges them a few at a time (automerge); an
 * upgrade's fill leaves a million articles in 8 to 18 segments, and a query word is looked up
 * in each, a prefix's OR'ed words each in each: a search's p99 halved with one segment (merged by
 * FTS5's 'optimize': 9 s at a million). This merges an index with more than MAX_SEGMENTS into
 * one, by steps of MERGE_PAGES pages, each its own short transaction (the caller's loop), so
 * the writes around it wait little. Answers whether work remains; `going` holds the tables whose
 * merge is under way (a negative page count begins one, a positive one goes on with it).
 */
export function mergeStep(s: Statements, ix: TextIndex, going: Set<string>): boolean {
  for (const table of [ix.table, ix.rankTable]) {
    const goesOn = going.has(table);
    if (!goesOn && (s.stmt(`SELECT count(DISTINCT segid) FROM "${table}_idx"`, true).get() as number) <= MAX_SEGMENTS) continue;
    going.add(table);
    const before = s.stmt("SELECT total_changes()", true).get() as number;
    s.stmt(`INSERT INTO "${table}" ("${table}", rank) VALUES ('merge', ?)`).run(goesOn ? MERGE_PAGES : -MERGE_PAGES);
    // FTS5's sign that nothing was left to merge: fewer than two rows written.
    if ((s.stmt("SELECT total_changes()", true).get() as number) - before >= 2) return true;
    going.delete(table);
  }
  return false;
}

/** Segments an index may keep before mergeStep merges it (FTS5's automerge keeps up to 4 a level). */
const MAX_SEGMENTS = 4;
/** Pages of merged index a step writes: about 1 MB. */
const MERGE_PAGES = 256;

/** FTS5's query for one of queryWords' words; a prefix as the words it begins (the module's comment), read from `terms`. */
function termOf(s: Statements, ix: TextIndex, w: string): string {
  const quoted = (t: string) => `"${t.replace(/"/g, '""')}"`;
  const stem = stemOf(w);
  if (!isPrefixWord(w)) return quoted(stem);
  const most = stem.length <= PREFIX_INDEX_CHARS ? MAX_INDEXED_PREFIX_TERMS : MAX_PREFIX_TERMS;
  // Every word it begins sorts between the stem and the stem followed by the last code point (none a letter or digit).
  const begun = s.readStmt(`SELECT term FROM "${ix.termsTable}" WHERE term >= ? AND term < ? ORDER BY term LIMIT ${most + 1}`, true).all(stem, `${stem}\u{10FFFF}`) as string[];
  if (begun.length > most) return `${quoted(stem)}*`;
  // None: the stem itself, a word no document holds.
  return begun.length ? `(${begun.map(quoted).join(" OR ")})` : quoted(stem);
}

/**
 * The matching rows of one page, with the number of matches (up to bounds.countUpTo; `capped`
 * past it). The order: the newest `rankWithin` matches, those whose rank column holds more of
 * the words first (then the newest stored), then every older match, newest first. One walk of
 * the index, newest first, reads at most countUpTo + 1 matches; only with `where` (SQL over the
 * collection's columns) is each walked match's row read; the page's rows are read whole
 * afterwards, by the caller.
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
  bounds: SearchBounds,
): { count: number; capped: boolean; rowids: number[] } {
  const fts = `"${ix.table}"`;
  const terms = words.map((w) => termOf(s, ix, w));
  const match = [...(onlyScope(s, ix, scope) ? [] : [`"${scopeWord(scope)}"`]), ...terms].join(" AND ");
  // FTS5 walks its lists backwards and stops at the LIMIT; with `where`, each match's row is read as it goes.
  const walk = where
    ? `SELECT ${fts}.rowid FROM ${fts} JOIN "${collectionTable}" c ON c.rowid = ${fts}.rowid WHERE ${fts} MATCH ? AND (${where.sql}) ORDER BY ${fts}.rowid DESC LIMIT ? OFFSET ?`
    : `SELECT rowid FROM ${fts} WHERE ${fts} MATCH ? ORDER BY rowid DESC LIMIT ? OFFSET ?`;
  const newest = (n: number, from: number) => s.readStmt(walk, true).all(match, ...(where?.params ?? []), n, from) as number[];
  const counted = newest(bounds.countUpTo + 1, 0);
  const capped = counted.length > bounds.countUpTo;
  if (capped) counted.pop();
  const head = counted.slice(0, bounds.rankWithin);
  const rowids: number[] = [];
  if (skip < head.length) rowids.push(...rankedHead(s, ix, terms, head, Math.min(limit, head.length - skip), skip));
  // Past the ranked head: the walk's own order; past what it counted, walked again from there.
  const from = Math.max(skip, head.length);
  const end = skip + limit;
  rowids.push(...counted.slice(from, end));
  if (end > counted.length && capped) rowids.push(...newest(end - Math.max(from, counted.length), Math.max(from, counted.length)));
  return { count: counted.length, capped, rowids };
}

/**
 * Positions [skip, skip + limit) of the newest matches (`head`, newest first) by relevance:
 * the more of the words the rank column holds, the higher, then the newest. One statement:
 * each word's rank-table matches over the head's rowid range stay in SQLite (a common title
 * word has tens of thousands at a million, each a step of the driver if read out; asking the
 * table once per row of the head costs more). The range is bound as integers: FTS5 seeks to an
 * integer bound, and reads the whole list for a REAL one, which is how a JavaScript number is
 * bound.
 */
function rankedHead(s: Statements, ix: TextIndex, terms: readonly string[], head: readonly number[], limit: number, skip: number): number[] {
  const rank = `"${ix.rankTable}"`;
  const inTitle = `(value IN (SELECT rowid FROM ${rank} WHERE ${rank} MATCH ? AND rowid >= ? AND rowid <= ?))`;
  const lo = BigInt(head[head.length - 1]);
  const hi = BigInt(head[0]);
  const sql = `SELECT value FROM json_each(?) ORDER BY ${terms.map(() => inTitle).join(" + ")} DESC, value DESC LIMIT ? OFFSET ?`;
  return s.readStmt(sql, true).all(JSON.stringify(head), ...terms.flatMap((t) => [t, lo, hi]), limit, skip) as number[];
}
