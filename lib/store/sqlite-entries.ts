// Multikey indexes of the embedded driver (IndexOptions.multikey): SQLite cannot index the
// elements of an array field, so each such index is a table of entries (EntryIndex). Here: the
// entry rows a document contributes, and the query of a find that such a table answers.
// sqlite-collection.ts keeps the tables in step with the documents.
import type { Filter, FindOptions } from "./collection.js";
import { sqlValue, toJson } from "./sqlite-json.js";
import type { Doc } from "./sqlite-packed-text.js";
import type { TableState } from "./sqlite-table.js";

/**
 * SQLite indexes one value per row and key, so an index over an array field is a table of its
 * own: a row per document and distinct element, its columns the index keys in order (`k0`...,
 * the document's `_id` last when the keys lack it), its primary key all of them. Rows change in
 * the same savepoint as their document, so they never disagree with it.
 */
export interface EntryIndex {
  name: string;
  table: string;
  keys: Array<[string, 1 | -1]>;
  array: string;
}

/** A value as an entry column holds it: what json_extract reads for the same value in the document. */
function entryValue(v: unknown): unknown {
  if (v === undefined || v === null) return null;
  if (typeof v === "boolean") return v ? 1 : 0;
  if (typeof v === "object" && !(v instanceof Date)) return toJson(v);
  return sqlValue(v);
}

export function valueAt(doc: Doc, path: string): unknown {
  let v: unknown = doc;
  for (const seg of path.split(".")) v = v && typeof v === "object" ? (v as Doc)[seg] : undefined;
  return v;
}

/** The entry rows of a document, one per distinct element of the array key (none for an empty or missing array). */
export function entriesOf(ix: EntryIndex, doc: Doc): unknown[][] {
  const raw = valueAt(doc, ix.array);
  const elements = raw === undefined ? [] : [...new Set((Array.isArray(raw) ? raw : [raw]).map(entryValue))];
  return elements.map((el) => ix.keys.map(([f]) => (f === ix.array ? el : f === "_id" ? doc._id : entryValue(valueAt(doc, f)))));
}

export const entryColumns = (ix: EntryIndex) => ix.keys.map((_, i) => `k${i}`);

/**
 * The ids query of a find that a multikey index serves: its filter is plain equality on exactly
 * the index's leading keys (the array key among them), and its sort, all one direction, the keys
 * that follow. Anything else is answered from the documents (the array key then costs a look into
 * each candidate's array).
 */
export function entryQuery(t: TableState, filter: Filter, o: FindOptions): { sql: string; params: unknown[] } | undefined {
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
