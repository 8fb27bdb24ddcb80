// The port's update modifiers ($set, $unset, $inc, $push) applied to a
// document in memory, as MongoDB applies them; the embedded driver runs this
// inside its write transaction on the document it just read.
import type { Update } from "./collection.js";

type Doc = Record<string, unknown>;

/** The object holding the last segment of `path`, created on the way when `create`. */
function parentOf(doc: Doc, path: string, create: boolean): [Doc | undefined, string] {
  const segments = path.split(".");
  let at: Doc | undefined = doc;
  for (const s of segments.slice(0, -1)) {
    let next: unknown = at[s];
    if (next === undefined && create) at[s] = next = {};
    if (typeof next !== "object" || next === null || Array.isArray(next)) {
      if (create) throw new Error(`cannot set '${path}': '${s}' is not an object`);
      return [undefined, ""];
    }
    at = next as Doc;
  }
  return [at, segments[segments.length - 1]];
}

/** Applies `update` to `doc` in place; an unknown modifier or a plain replacement is refused. */
export function applyUpdate(doc: Doc, update: Update): Doc {
  for (const [op, fields] of Object.entries(update)) {
    if (fields === undefined) continue;
    for (const [path, value] of Object.entries(fields as Doc)) {
      if (path === "_id" && op !== "$inc") throw new Error("the _id of a document cannot change");
      switch (op) {
        case "$set": {
          const [parent, key] = parentOf(doc, path, true);
          parent![key] = value;
          break;
        }
        case "$unset": {
          const [parent, key] = parentOf(doc, path, false);
          if (parent) delete parent[key];
          break;
        }
        case "$inc": {
          const [parent, key] = parentOf(doc, path, true);
          const current = parent![key] ?? 0;
          if (typeof current !== "number" || typeof value !== "number") throw new Error(`$inc needs numbers ('${path}')`);
          parent![key] = current + value;
          break;
        }
        case "$push": {
          const [parent, key] = parentOf(doc, path, true);
          const current = parent![key] ?? [];
          if (!Array.isArray(current)) throw new Error(`$push needs an array ('${path}')`);
          const each = typeof value === "object" && value !== null && "$each" in value ? (value as { $each: unknown[] }).$each : [value];
          parent![key] = [...current, ...each];
          break;
        }
        default:
          throw new Error(`the embedded store does not support the update ${op.startsWith("$") ? op : "by replacement"}`);
      }
    }
  }
  return doc;
}

/** The document an upsert creates: the key's plain values, then the modifiers. */
export function upsertedDoc(key: Record<string, string | number>, update: Update): Doc {
  return applyUpdate({ ...key }, update);
}
