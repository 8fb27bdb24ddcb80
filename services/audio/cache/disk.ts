// Synthesized chunks on local disk, bounded in size, least recently used out first (and, in a
// folder of their own, the loudness meters of such chunks: loudness/index.ts).
//
// Disk rather than the BlobStore: the cache is a per-worker speed-up, not data
// anyone else reads, and a local file read is far cheaper than a GridFS round trip.
// Files live at <dir>/<first 2 hex>/<sha256>.mp3 (or opts.ext); the access order survives restarts
// through the files' mtimes (touched on every hit).
import { randomUUID } from "node:crypto";
import { promises as fs } from "node:fs";
import path from "node:path";
import type { Logger } from "../../../lib/log.js";

export interface ChunkCache {
  get(key: string): Promise<Buffer | undefined>;
  put(key: string, mp3: Buffer): Promise<void>;
  /** Bytes currently held. */
  size(): number;
  /** The keys held, least recently used first. */
  keys(): string[];
}

const KEY = /^[0-9a-f]{64}$/;

export interface DiskCacheOptions {
  dir: string;
  maxBytes: number;
  log?: Logger;
  /** The files' extension (default ".mp3"). */
  ext?: string;
  /**
   * Whether a hit touches the file's mtime (default true), so that the order survives a restart as
   * least recently used; false: as least recently written, for entries whose loss costs little.
   */
  touch?: boolean;
}

export async function openDiskCache(opts: DiskCacheOptions): Promise<ChunkCache> {
  if (!Number.isInteger(opts.maxBytes) || opts.maxBytes < 0) throw new RangeError(`cache maxBytes must be an integer >= 0, got ${opts.maxBytes}`);
  await fs.mkdir(opts.dir, { recursive: true });
  const ext = opts.ext ?? ".mp3";
  // Map iteration order is insertion order: re-inserting on use keeps the least recent first.
  const entries = new Map<string, number>();
  let total = 0;

  const found: Array<{ key: string; size: number; mtime: number }> = [];
  for (const sub of await fs.readdir(opts.dir).catch(() => [] as string[])) {
    if (!/^[0-9a-f]{2}$/.test(sub)) continue;
    for (const name of await fs.readdir(path.join(opts.dir, sub)).catch(() => [] as string[])) {
      const key = name.slice(0, -ext.length);
      if (!KEY.test(key) || !name.endsWith(ext)) continue;
      const st = await fs.stat(path.join(opts.dir, sub, name)).catch(() => undefined);
      if (st) found.push({ key, size: st.size, mtime: st.mtimeMs });
    }
  }
  found.sort((a, b) => a.mtime - b.mtime);
  for (const f of found) {
    entries.set(f.key, f.size);
    total += f.size;
  }

  const file = (key: string) => path.join(opts.dir, key.slice(0, 2), `${key}${ext}`);
  const check = (key: string) => {
    if (!KEY.test(key)) throw new Error("chunk cache: keys are SHA-256 hex digests");
  };

  async function evict(): Promise<void> {
    for (const [key, size] of entries) {
      if (total <= opts.maxBytes) break;
      entries.delete(key);
      total -= size;
      await fs.rm(file(key), { force: true }).catch((e) => opts.log?.warn({ err: (e as Error).message }, "chunk cache: could not evict"));
    }
  }
  await evict();

  return {
    size: () => total,
    keys: () => [...entries.keys()],
    async get(key) {
      check(key);
      const size = entries.get(key);
      if (size === undefined) return undefined;
      try {
        const data = await fs.readFile(file(key));
        entries.delete(key);
        entries.set(key, size);
        if (opts.touch !== false) {
          const now = new Date();
          fs.utimes(file(key), now, now).catch(() => undefined);
        }
        return data;
      } catch {
        // Removed behind our back (another worker's eviction, a cleanup): a miss.
        if (entries.delete(key)) total -= size;
        return undefined;
      }
    },
    async put(key, mp3) {
      check(key);
      if (mp3.length > opts.maxBytes) return;
      const target = file(key);
      await fs.mkdir(path.dirname(target), { recursive: true });
      const tmp = `${target}.${randomUUID()}.tmp`;
      await fs.writeFile(tmp, mp3);
      await fs.rename(tmp, target);
      const old = entries.get(key);
      if (old !== undefined) {
        total -= old;
        entries.delete(key);
      }
      entries.set(key, mp3.length);
      total += mp3.length;
      await evict();
    },
  };
}

/** For configurations without a cache: every lookup misses. */
export const noCache: ChunkCache = { get: async () => undefined, put: async () => undefined, size: () => 0, keys: () => [] };
