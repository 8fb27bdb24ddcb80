// Audio files in MongoDB GridFS (full stack). filename = key. GridFS writes
// the files document only after all chunks, so a reader sees either the old
// version or the complete new one. Superseded versions are removed only after
// a grace period: a reader that picked the old version a moment before the
// replacement landed is still streaming its chunks.
import { GridFSBucket, type Db, type GridFSBucketReadStream, type GridFSFile, type ObjectId } from "mongodb";
import { pipeline, Transform, type Readable } from "node:stream";
import { assertSafeKey, blobNotFound, type BlobInfo, type BlobStore } from "./port.js";
import { checkRange, contentEtagInSlices } from "./etag-and-range.js";

interface Metadata {
  etag: string;
  contentType: string;
}

export async function createGridFsBlobStore(db: Db, bucketName = "audio", replaceGraceMs = 60_000): Promise<BlobStore> {
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

  const pending = new Set<NodeJS.Timeout>();

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
      const metadata: Metadata = { etag: await contentEtagInSlices(data), contentType };
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
      const superseded = all.slice(mine + 1).map((f) => f._id);
      if (superseded.length > 0) {
        const timer = setTimeout(() => {
          pending.delete(timer);
          removeAll(superseded).catch(() => undefined);
        }, replaceGraceMs);
        timer.unref();
        pending.add(timer);
      }
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
      if (!f) throw blobNotFound(key);
      const r = checkRange(range, f.length);
      // GridFS takes an exclusive end.
      const stream = bucket.openDownloadStream(f._id, r ? { start: r.start, end: r.end + 1 } : {});
      return wholeOrNotFound(key, stream, r ? r.end - r.start + 1 : f.length);
    },

    async deletePrefix(prefix) {
      const base = prefix.replace(/\/+$/, "");
      if (!base) throw new Error("deletePrefix needs a non-empty prefix");
      assertSafeKey(base);
      const escaped = prefix.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
      const hits = await files.find({ filename: { $regex: `^${escaped}` } }, { projection: { _id: 1 } }).toArray();
      await removeAll(hits.map((f) => f._id));
    },

    async list(prefix) {
      const escaped = prefix.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
      const filter = prefix ? { filename: { $regex: `^${escaped}` } } : {};
      const hits = await files.find(filter, { projection: { filename: 1 } }).toArray();
      return [...new Set(hits.map((f) => f.filename))];
    },

    // The Db belongs to the caller's shared client (lib/mongo.ts). Versions
    // still waiting for removal stay until the next put of their key.
    async close() {
      for (const t of pending) clearTimeout(t);
      pending.clear();
    },
  };
}

/**
 * The download stream, once its first chunk is in and counted to its end. A file deleted since it
 * was found (a takedown under way) is "not found" here, before the caller has answered anything,
 * rather than an error in the middle of the answer; a file of one chunk, as timed text is, is then
 * whole. Chunks removed later cut the stream with an error: the driver would end it quietly short.
 */
async function wholeOrNotFound(key: string, stream: GridFSBucketReadStream, expected: number): Promise<Readable> {
  let first: Buffer | null;
  try {
    await new Promise<void>((resolve, reject) => {
      const done = () => {
        stream.off("error", fail);
        resolve();
      };
      const fail = (err: Error) => {
        stream.off("readable", done);
        reject(err);
      };
      stream.once("readable", done);
      stream.once("error", fail);
    });
    first = stream.read() as Buffer | null;
  } catch (err) {
    stream.destroy();
    if (/FileNotFound|ChunkIsMissing/i.test((err as Error).message)) throw blobNotFound(key);
    throw err;
  }
  if (first === null && expected > 0) {
    stream.destroy();
    throw blobNotFound(key);
  }
  let seen = 0;
  const counted = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      seen += chunk.length;
      cb(null, chunk);
    },
    flush(cb) {
      // "Not found", as everywhere a file is gone: a reader that buffers the whole file takes it so.
      cb(seen < expected ? blobNotFound(key, `removed while being read (${seen} of ${expected} bytes)`) : null);
    },
  });
  if (first !== null) counted.write(first);
  return pipeline(stream, counted, () => undefined);
}
