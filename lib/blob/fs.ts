// Audio files in a directory (embedded mode). Data lives at <dir>/<key>; a
// sidecar at <dir>/.meta/<key>.json keeps the content hash and type, so stat
// never has to read the file. Keys cannot start with ".", so neither .meta nor
// .tmp can collide with one.
import { randomBytes } from "node:crypto";
import { mkdir, open, readdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import type { Readable } from "node:stream";
import { assertSafeKey, blobNotFound, isGone, type BlobInfo, type BlobStore } from "./port.js";
import { checkRange, contentEtagInSlices } from "./etag-and-range.js";

interface Meta {
  etag: string;
  contentType: string;
  size: number;
  mtimeMs: number;
}

const TYPES: Record<string, string> = { mp3: "audio/mpeg", json: "application/json", txt: "text/plain" };

export function createFsBlobStore(dir: string): BlobStore {
  const tmpDir = join(dir, ".tmp");
  const metaDir = join(dir, ".meta");
  const dataPath = (key: string) => join(dir, key);
  const metaPath = (key: string) => join(metaDir, `${key}.json`);

  async function writeAtomic(path: string, data: Buffer | string): Promise<void> {
    await mkdir(tmpDir, { recursive: true });
    await mkdir(dirname(path), { recursive: true });
    const tmp = join(tmpDir, `${randomBytes(8).toString("hex")}.part`);
    try {
      await writeFile(tmp, data, { flush: true });
      await rename(tmp, path);
    } catch (err) {
      await rm(tmp, { force: true });
      throw err;
    }
  }

  async function readMeta(key: string): Promise<Meta | null> {
    try {
      return JSON.parse(await readFile(metaPath(key), "utf8")) as Meta;
    } catch {
      return null;
    }
  }

  async function statKey(key: string): Promise<BlobInfo | null> {
    assertSafeKey(key);
    const st = await unlessGone(stat(dataPath(key)));
    if (!st?.isFile()) return null;
    const meta = await readMeta(key);
    // A sidecar that does not describe this very file (missing, or the file
    // was copied in by hand) is not trusted: hash the content instead.
    if (meta && meta.size === st.size && meta.mtimeMs === st.mtimeMs) {
      return { size: st.size, etag: meta.etag, contentType: meta.contentType, modified: st.mtime };
    }
    const ext = key.slice(key.lastIndexOf(".") + 1).toLowerCase();
    // Removed since the stat (a takedown under way): not found.
    const content = await unlessGone(readFile(dataPath(key)));
    if (!content) return null;
    return {
      size: st.size,
      etag: await contentEtagInSlices(content),
      contentType: meta?.contentType ?? TYPES[ext] ?? "application/octet-stream",
      modified: st.mtime,
    };
  }

  return {
    async put(key, data, contentType) {
      assertSafeKey(key);
      const etag = await contentEtagInSlices(data);
      await writeAtomic(dataPath(key), data);
      const st = await stat(dataPath(key));
      const meta: Meta = { etag, contentType, size: st.size, mtimeMs: st.mtimeMs };
      await writeAtomic(metaPath(key), JSON.stringify(meta));
      return { size: st.size, etag, contentType, modified: st.mtime };
    },

    stat: statKey,

    async read(key, range): Promise<Readable> {
      const info = await statKey(key);
      if (!info) throw blobNotFound(key);
      const r = checkRange(range, info.size);
      // Opened before the stream is handed out: a file removed meanwhile (a takedown under way)
      // is "not found" here, not an error in the middle of an answer.
      const handle = await unlessGone(open(dataPath(key), "r"));
      if (!handle) throw blobNotFound(key);
      return handle.createReadStream(r ? { start: r.start, end: r.end } : {});
    },

    async deletePrefix(prefix) {
      const base = prefix.replace(/\/+$/, "");
      if (!base) throw new Error("deletePrefix needs a non-empty prefix");
      assertSafeKey(base);
      // Only the folder that can hold matching keys is walked.
      const slash = prefix.lastIndexOf("/");
      const folder = slash >= 0 ? prefix.slice(0, slash) : "";
      const keys = (await listKeys(dir, folder)).filter((k) => k.startsWith(prefix));
      // The file before its sidecar: a reader in between finds no file (not found) rather than
      // a file without its sidecar, which it would have to hash.
      for (const k of keys) {
        await rm(dataPath(k), { force: true });
        await rm(metaPath(k), { force: true });
      }
      await pruneEmpty(dir, folder);
      await pruneEmpty(metaDir, folder);
    },

    async list(prefix) {
      const slash = prefix.lastIndexOf("/");
      return (await listKeys(dir, slash >= 0 ? prefix.slice(0, slash) : "")).filter((k) => k.startsWith(prefix));
    },

    async close() {},
  };
}

/** The value, or null when the path is not there (or went meanwhile). */
async function unlessGone<T>(work: Promise<T>): Promise<T | null> {
  try {
    return await work;
  } catch (err) {
    if (isGone(err)) return null;
    throw err;
  }
}

async function listKeys(root: string, folder: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (rel: string) => {
    let entries;
    try {
      entries = await readdir(join(root, rel), { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      if (!rel && e.name.startsWith(".")) continue;
      const k = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) await walk(k);
      else if (e.isFile()) out.push(k);
    }
  };
  await walk(folder);
  return out;
}

/** Removes now-empty folders under root/folder, bottom-up. */
async function pruneEmpty(root: string, folder: string): Promise<void> {
  const prune = async (rel: string): Promise<boolean> => {
    let entries;
    try {
      entries = await readdir(join(root, rel), { withFileTypes: true });
    } catch {
      return false;
    }
    let empty = true;
    for (const e of entries) {
      if (!rel && e.name.startsWith(".")) {
        empty = false;
        continue;
      }
      if (e.isDirectory() && (await prune(rel ? `${rel}/${e.name}` : e.name))) continue;
      empty = false;
    }
    if (empty && rel) {
      await rm(join(root, rel), { recursive: true, force: true });
      return true;
    }
    return false;
  };
  await prune(folder);
}
