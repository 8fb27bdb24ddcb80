// Documents as JSON text in SQLite. JSON has no dates, and the stores keep
// Date values (a project's or token's creation time) that must come back as
// Dates and still sort and compare in SQL. A Date is written as a string: a
// marker no text a client can send contains (a control character the API
// refuses) followed by its ISO form, which sorts in time order.

const DATE_MARK = "\u0001D";
/** How the marker appears inside JSON text (JSON.stringify escapes control characters). */
const DATE_MARK_IN_JSON = "\\u0001D";

/** A value as the SQL side sees it: a Date becomes its sortable marked string. */
export function sqlValue(v: unknown): unknown {
  return v instanceof Date ? DATE_MARK + v.toISOString() : v;
}

function replacer(this: Record<string, unknown>, key: string, value: unknown): unknown {
  // `value` is already the Date's toJSON(); the holder still has the Date.
  return this[key] instanceof Date ? DATE_MARK + (value as string) : value;
}

export function toJson(doc: unknown): string {
  return JSON.stringify(doc, replacer);
}

function reviver(_key: string, value: unknown): unknown {
  return typeof value === "string" && value.startsWith(DATE_MARK) ? new Date(value.slice(DATE_MARK.length)) : value;
}

export function fromJson<T>(text: string): T {
  // Most documents hold no date: the reviver (several times slower) only runs when one might.
  return (text.includes(DATE_MARK_IN_JSON) ? JSON.parse(text, reviver) : JSON.parse(text)) as T;
}
