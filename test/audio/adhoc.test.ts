// Ad-hoc (Synthesize) audio expires: the sweep deletes hour folders older
// than the TTL on both blob backends, and nothing younger.
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import { MongoClient } from "mongodb";
import { createFsBlobStore } from "../../lib/blob/fs.js";
import { createGridFsBlobStore } from "../../lib/blob/gridfs.js";
import type { BlobStore } from "../../lib/blob/port.js";
import { logger } from "../../lib/log.js";
import { adhocBase, startAdhocSweeper } from "../../services/audio/adhoc.js";
import { requireMongo } from "../support/servers.js";

const HOUR = 3_600_000;
const log = logger("adhoc-test");

function sweepSuite(name: string, make: (ctx: Mocha.Context) => Promise<{ blobs: BlobStore; cleanup(): Promise<void> }>) {
  describe(`ad-hoc audio expiry (${name})`, () => {
    let f: { blobs: BlobStore; cleanup(): Promise<void> };
    beforeEach(async function () {
      f = await make(this);
    });
    afterEach(async () => f?.cleanup());

    it("deletes files older than the TTL, keeps younger ones, and keeps going as time passes", async () => {
      let now = Date.UTC(2026, 10, 24, 18, 30);
      const put = async (at: number) => {
        const base = adhocBase(at, randomBytes(4).toString("hex"));
        await f.blobs.put(`${base}/full.mp3`, Buffer.from("full"), "audio/mpeg");
        await f.blobs.put(`${base}/preview.mp3`, Buffer.from("prev"), "audio/mpeg");
        return base;
      };
      const old3d = await put(now - 72 * HOUR);
      const old25h = await put(now - 25.5 * HOUR);
      const young = await put(now - 2 * HOUR);
      const fresh = await put(now);
      const exists = async (base: string) => (await f.blobs.stat(`${base}/full.mp3`)) !== null && (await f.blobs.stat(`${base}/preview.mp3`)) !== null;

      const sweeper = startAdhocSweeper({ blobs: f.blobs, ttlMs: 24 * HOUR, everyMs: 3_600_000, log, now: () => now });
      try {
        await sweeper.sweep();
        expect(await exists(old3d)).to.equal(false);
        expect(await exists(old25h)).to.equal(false);
        expect(await exists(young)).to.equal(true);
        expect(await exists(fresh)).to.equal(true);
        expect(await f.blobs.stat(`${old3d}/full.mp3`)).to.equal(null);

        // A day and a bit later the two younger ones are due; the next sweep only walks the new hours.
        now += 24 * HOUR;
        const walked = await sweeper.sweep();
        expect(walked).to.be.within(23, 25);
        expect(await exists(young)).to.equal(false);
        expect(await exists(fresh)).to.equal(true);
        now += 2 * HOUR;
        await sweeper.sweep();
        expect(await exists(fresh)).to.equal(false);
      } finally {
        sweeper.stop();
      }
    });
  });
}

sweepSuite("directory", async () => {
  const dir = await mkdtemp(join(tmpdir(), "adhoc-"));
  return { blobs: createFsBlobStore(dir), cleanup: () => rm(dir, { recursive: true, force: true }) };
});

let client: MongoClient | undefined;
after(async () => {
  await client?.close();
  client = undefined;
});

sweepSuite("GridFS", async (ctx) => {
  const url = await requireMongo(ctx);
  client ??= await MongoClient.connect(url, { serverSelectionTimeoutMS: 10_000 });
  const db = client.db(`adhoc_test_${randomBytes(4).toString("hex")}`);
  const blobs = await createGridFsBlobStore(db);
  return {
    blobs,
    async cleanup() {
      await blobs.close();
      await db.dropDatabase();
    },
  };
});
