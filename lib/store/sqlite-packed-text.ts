// How the embedded driver (sqlite-collection.ts) stores a document and reads it back: the JSON
// column without `_id`, and the large text fields (SqliteCollectionOptions.packed) deflated in a
// column of their own, inflated again on read, the lately read ones kept so a hot article is not
// inflated on every read. Kept apart from the collection so the row format is in one place.
import { fromJson, toJson } from "./sqlite-json.js";
import { reusedDeflateRaw, reusedInflateRaw } from "./reused-zlib.js";
import { SizedFifo } from "../sized-fifo.js";

export type Doc = Record<string, unknown>;
/** `z`: the packed fields as deflated JSON; null when the row has none (or predates packing). */
export type Row = { r: number; _id: string; doc: string; z?: Buffer | null };

// A small window and hash table: zlib's defaults set up and clear a 256 KB state per call,
// several times the work of deflating 1 KB of prose, for the same ratio on articles.
const DEFLATE = { level: 6, windowBits: 12, memLevel: 5 } as const;
const INFLATE = { windowBits: 12 } as const;

/** A document as stored: the JSON column and the packed fields' JSON (null: none). */
interface Stored {
  doc: string;
  packed: string | null;
}

/**
 * The JSON column without `_id` (the key column holds it already, and an archive's ids, a title
 * slug and a random part of ~50 characters, would otherwise be stored twice per row) and
 * without the packed fields.
 */
export function storedOf(doc: Doc, packed: readonly string[]): Stored {
  const { _id: _unused, ...rest } = doc;
  let out: Doc | undefined;
  for (const f of packed) {
    if (rest[f] === undefined) continue;
    (out ??= {})[f] = rest[f];
    delete rest[f];
  }
  return { doc: toJson(rest), packed: out ? toJson(out) : null };
}

// One zlib stream each, reused: a stream made per call cost more than the work (reused-zlib.ts).
const deflater = reusedDeflateRaw(DEFLATE);
const inflater = reusedInflateRaw(INFLATE);
export const deflated = (packed: string | null): Buffer | null => (packed === null ? null : deflater.buffer(Buffer.from(packed, "utf8")));
export const inflated = (z: Buffer | null | undefined): string | null => (z ? inflater.text(z) : null);

/** Characters of inflated text kept per table for rows read again (a hot article is read many times). */
const RECENT_PACKED_CHARS = 4 * 1024 * 1024;

/**
 * The packed fields of rows read lately, by id, each with the deflated bytes they came from, so
 * a row read again is inflated again only when it was written since. Bounded by characters;
 * the oldest entries go first.
 */
export class RecentlyInflated {
  // Oldest first out without a walk from the map's start (lib/sized-fifo.ts): with more rows read
  // than fit, every read evicted one.
  private readonly byId = new SizedFifo<{ z: Buffer; packed: string }>(RECENT_PACKED_CHARS);

  packedOf(id: string, z: Buffer | null | undefined): string | null {
    if (!z) return null;
    const hit = this.byId.get(id);
    if (hit && hit.z.equals(z)) return hit.packed;
    const packed = inflated(z)!;
    if (packed.length > RECENT_PACKED_CHARS / 16) this.byId.delete(id);
    else this.byId.set(id, { z, packed }, packed.length);
    return packed;
  }
}

/** A row's document; rows of the first SQLite builds still carry `_id` in the JSON too. */
export function docOf(row: { _id: string; doc: string }, packed: string | null = null): Doc {
  const d = fromJson<Doc>(row.doc);
  if (packed !== null) Object.assign(d, fromJson<Doc>(packed));
  d._id = row._id;
  return d;
}

/** Whether a filter names one of `fields` anywhere (inside its operators too). */
export function names(filter: unknown, fields: readonly string[]): boolean {
  if (Array.isArray(filter)) return filter.some((f) => names(f, fields));
  if (!filter || typeof filter !== "object") return false;
  return Object.entries(filter).some(([k, v]) => fields.includes(k.split(".")[0]) || (k.startsWith("$") && names(v, fields)));
}
