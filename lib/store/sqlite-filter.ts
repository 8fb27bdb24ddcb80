// The port's MongoDB-subset filters and sorts as SQL over a table of JSON
// documents (sqlite-collection.ts). A field is read with exactly the
// expression its index was created on (fieldExpr), so the planner can use the
// index for equality, ranges and order.
//
// MongoDB's semantics kept: {f: null} matches a missing field too; $ne and
// $nin match documents without the field; comparisons only match values of
// the operand's type (a number is never "less than" a string); equality with
// a field holding an array matches when an element is equal. That last one
// needs a look into the array that no index can serve, so it applies to
// fields outside every index: an indexed field is taken to hold single values
// of one type.
import { sqlValue, toJson } from "./sqlite-json.js";
import type { Filter, SortSpec } from "./collection.js";

export interface SqlPart {
  sql: string;
  params: unknown[];
}

const FIELD = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$/;

export const jsonPath = (field: string): string => {
  if (!FIELD.test(field)) throw new Error(`the embedded store cannot query the field '${field}'`);
  return `'$.${field}'`;
};

/** The SQL expression for a field: the `_id` column, or the value at its path in the document. */
export const fieldExpr = (field: string): string => (field === "_id" ? "_id" : `json_extract(doc,${jsonPath(field)})`);

export function orderBy(sort: SortSpec | undefined): string {
  const keys = Object.entries(sort ?? {});
  return keys.length ? ` ORDER BY ${keys.map(([f, dir]) => `${fieldExpr(f)}${dir === -1 ? " DESC" : ""}`).join(", ")}` : "";
}

const isOperatorObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v) && !(v instanceof Date) && Object.keys(v).length > 0 && Object.keys(v).every((k) => k.startsWith("$"));

/** Never NULL, so NOT of it means "does not match" also where the field is missing. */
const not = (p: SqlPart): SqlPart => ({ sql: `NOT coalesce(${p.sql},0)`, params: p.params });
const all = (parts: SqlPart[], op: "AND" | "OR"): SqlPart => {
  if (parts.length === 0) return { sql: op === "AND" ? "1" : "0", params: [] };
  if (parts.length === 1) return parts[0];
  return { sql: `(${parts.map((p) => p.sql).join(` ${op} `)})`, params: parts.flatMap((p) => p.params) };
};

/** Translates a filter; `scalarFields` are the indexed ones (see above). */
export function whereOf(filter: Filter, scalarFields: ReadonlySet<string>): SqlPart {
  const parts: SqlPart[] = [];
  for (const [key, value] of Object.entries(filter)) {
    if (key === "$and" || key === "$or") {
      if (!Array.isArray(value)) throw new Error(`${key} takes an array of filters`);
      parts.push(all(value.map((f: Filter) => whereOf(f, scalarFields)), key === "$and" ? "AND" : "OR"));
    } else if (key.startsWith("$")) throw new Error(`the embedded store does not support ${key}`);
    else parts.push(fieldCondition(key, value, scalarFields.has(key) || key === "_id"));
  }
  return all(parts, "AND");
}

function fieldCondition(field: string, value: unknown, scalar: boolean): SqlPart {
  if (!isOperatorObject(value)) return equals(field, value, scalar);
  const parts: SqlPart[] = [];
  for (const [op, operand] of Object.entries(value)) {
    switch (op) {
      case "$ne":
        parts.push(not(equals(field, operand, scalar)));
        break;
      case "$in":
      case "$nin": {
        if (!Array.isArray(operand)) throw new Error(`${op} takes an array`);
        const any = oneOf(field, operand, scalar);
        parts.push(op === "$in" ? any : not(any));
        break;
      }
      case "$lt":
      case "$lte":
      case "$gt":
      case "$gte":
        parts.push(compare(field, op, operand));
        break;
      case "$exists":
        parts.push({ sql: field === "_id" ? (operand ? "1" : "0") : `json_type(doc,${jsonPath(field)}) IS ${operand ? "NOT " : ""}NULL`, params: [] });
        break;
      default:
        throw new Error(`the embedded store does not support ${op}`);
    }
  }
  return all(parts, "AND");
}

function equals(field: string, value: unknown, scalar: boolean): SqlPart {
  const e = fieldExpr(field);
  if (value === null || value === undefined) return { sql: `${e} IS NULL`, params: [] };
  // JSON true/false read back as 1/0. An indexed field holds one type (above), so 1/0 is the flag and the
  // index answers alone; elsewhere the JSON type tells a flag from the numbers.
  if (typeof value === "boolean") return { sql: scalar ? `${e} = ${value ? 1 : 0}` : `json_type(doc,${jsonPath(field)}) = '${value}'`, params: [] };
  const v = typeof value === "object" && !(value instanceof Date) ? toJson(value) : sqlValue(value);
  if (scalar) return { sql: `${e} = ?`, params: [v] };
  const path = jsonPath(field);
  return {
    sql: `(${e} = ? OR (json_type(doc,${path}) = 'array' AND EXISTS (SELECT 1 FROM json_each(doc,${path}) WHERE value = ?)))`,
    params: [v, v],
  };
}

function oneOf(field: string, values: unknown[], scalar: boolean): SqlPart {
  const plain = values.filter((v) => typeof v === "string" || typeof v === "number" || v instanceof Date);
  if (!scalar || plain.length !== values.length) return all(values.map((v) => equals(field, v, scalar)), "OR");
  if (plain.length === 0) return { sql: "0", params: [] };
  return { sql: `${fieldExpr(field)} IN (${plain.map(() => "?").join(",")})`, params: plain.map(sqlValue) };
}

// SQLite orders NULL < numbers < text < blobs, so bounding a range by the
// edge of the operand's type keeps other types out and stays an index range.
function compare(field: string, op: "$lt" | "$lte" | "$gt" | "$gte", operand: unknown): SqlPart {
  const e = fieldExpr(field);
  const sign = { $lt: "<", $lte: "<=", $gt: ">", $gte: ">=" }[op];
  const below = op === "$lt" || op === "$lte";
  if (typeof operand === "number") return { sql: below ? `${e} ${sign} ?` : `(${e} ${sign} ? AND ${e} < '')`, params: [operand] };
  if (typeof operand === "string" || operand instanceof Date) {
    return { sql: below ? `(${e} ${sign} ? AND ${e} >= '')` : `(${e} ${sign} ? AND ${e} < x'')`, params: [sqlValue(operand)] };
  }
  throw new Error(`the embedded store compares numbers, strings and dates only (${op} on '${field}')`);
}
