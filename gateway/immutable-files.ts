// Small immutable files (a revision's segments.json) read from the blob store
// and kept in memory, so answering with one costs about what a read by id
// does. Keyed by blob key: a key names one revision's file, written once and
// never changed, so an entry is never stale. A file taken down may linger
// here, but callers look the article up first, and a deleted or updated
// article no longer names that key. Bounded by bytes, the least recently used
// leaving first; files larger than a tenth of the bound are not kept.
import type { BlobStore } from "../lib/blob/port.js";

export interface ImmutableFiles {
  /** The file's bytes, or null when the store has no such file. */
  get(key: string): Promise<Buffer | null>;
  /** Bytes held (tests, metrics). */
  readonly bytes: number;
}

export const DEFAULT_FILE_CACHE_BYTES = 32 * 1024 * 1024;

export function createImmutableFiles(blobs: BlobStore, maxBytes = DEFAULT_FILE_CACHE_BYTES): ImmutableFiles {
  const entries = new Map<string, Buffer>();
  let held = 0;

  async function load(key: string): Promise<Buffer | null> {
    try {
      const parts: Buffer[] = [];
      for await (const chunk of await blobs.read(key)) parts.push(chunk as Buffer);
      return Buffer.concat(parts);
    } catch (e) {
      // Never written, or taken down meanwhile (a delete's clean-up): both stores say ENOENT.
      if ((e as NodeJS.ErrnoException).code === "ENOENT") return null;
      throw e;
    }
  }

  return {
    async get(key) {
      const hit = entries.get(key);
      if (hit) {
        // Re-inserted: the map stays ordered by last use.
        entries.delete(key);
        entries.set(key, hit);
        return hit;
      }
      const data = await load(key);
      if (!data || data.length > maxBytes / 10 || entries.has(key)) return data;
      entries.set(key, data);
      held += data.length;
      for (const [k, v] of entries) {
        if (held <= maxBytes) break;
        entries.delete(k);
        held -= v.length;
      }
      return data;
    },
    get bytes() {
      return held;
    },
  };
}
