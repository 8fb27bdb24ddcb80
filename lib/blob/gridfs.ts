// Audio files in MongoDB GridFS (full stack). filename = key. GridFS writes
// the files document only after all chunks, so a reader sees either the old
// version or the complete new one; put removes older versions afterwards.
import { GridFSBucket, type Db, type GridFSFile, type ObjectId } from "mongodb";
import type { Readable } from "node:stream";
import { assertSafeKey, type BlobInfo, type BlobStore } from "./port.js";
import { checkRange, contentEtag } from "./etag-and-range.js";

interface Metadata {
  etag: string;
  contentType: string;
}

export async function createGridFsBlobStore(db: Db, bucketName = "audio"): Promise<BlobStore> {
  const bucket = new GridFSBucket(db, { bucketName });
  const files = db.collection<GridFSFile>(`${bucketName}.files`);

  const newest = async (key: string): Promise<GridFSFile | null> =>
    (await bucket.find({ filename: key }).sort({ uploadDate: -1, _id: -1 }).limit(1).toArray())[0] ?? null;

  const info = (f: GridFSFile): BlobInfo => {
    const m = (f.metadata ?? {}) as Partial<Metadata>;
    return {
      size: f.length,
      etag: m.etag ?? String(f._id),
      contentType: m.contentType ?? "application/octet-stream",
      modified: f.uploadDate,
    };
  };

  const removeAll = async (ids: ObjectId[]) => {
    for (const id of ids) {
      try {
        await bucket.delete(id);
      } catch (err) {
        // Already gone (a concurrent put or delete won the race) is fine.
        if (!/not found|FileNotFound/i.test((err as Error).message)) throw err;
      }
    }
  };

  return {
    async put(key, data, contentType) {
      assertSafeKey(key);
      const metadata: Metadata = { etag: contentEtag(data), contentType };
      const upload = bucket.openUploadStream(key, { metadata });
      await new Promise<void>((resolve, reject) => {
        upload.once("finish", () => resolve());
        upload.once("error", reject);
        upload.end(data);
      });
      // Only versions that sort before ours go, in the order newest() uses,
      // so two concurrent puts of one key cannot delete each other.
      const all = await files.find({ filename: key }).sort({ uploadDate: -1, _id: -1 }).toArray();
      const mine = all.findIndex((f) => f._id.equals(upload.id));
      if (mine < 0) throw new Error(`GridFS lost ${key} right after writing it`);
      await removeAll(all.slice(mine + 1).map((f) => f._id));
      return info(all[mine]);
    },

    async stat(key) {
      assertSafeKey(key);
      const f = await newest(key);
      return f ? info(f) : null;
    },

    async read(key, range): Promise<Readable> {
      assertSafeKey(key);
      const f = await newest(key);
      if (!f) throw Object.assign(new Error(`blob not found: ${key}`), { code: "ENOENT" });
      const r = checkRange(range, f.length);
      // GridFS takes an exclusive end.
      return bucket.openDownloadStream(f._id, r ? { start: r.start, end: r.end + 1 } : {});
    },

    async deletePrefix(prefix) {
      const base = prefix.replace(/\/+$/, "");
      if (!base) throw new Error("deletePrefix needs a non-empty prefix");
      assertSafeKey(base);
      const escaped = prefix.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
      const hits = await files.find({ filename: { $regex: `^${escaped}` } }, { projection: { _id: 1 } }).toArray();
      await removeAll(hits.map((f) => f._id));
    },

    // The Db belongs to the caller's shared client (lib/mongo.ts).
    async close() {},
  };
}
