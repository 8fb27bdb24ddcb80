// The behaviour every BlobStore adapter must show. Run by blob.test.ts
// against the directory store and GridFS.
import { expect } from "chai";
import { randomBytes } from "node:crypto";
import type { Readable } from "node:stream";
import type { BlobStore } from "../../lib/blob/port.js";

export interface BlobUnderTest {
  store: BlobStore;
  cleanup(): Promise<void>;
}
export type BlobFactory = (ctx: Mocha.Context) => Promise<BlobUnderTest>;

async function collect(r: Readable): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const c of r) parts.push(c as Buffer);
  return Buffer.concat(parts);
}

export function blobContract(name: string, factory: BlobFactory): void {
  describe(`BlobStore contract: ${name}`, function () {
    this.timeout(20_000);
    let under: BlobUnderTest | undefined;
    let store: BlobStore;

    beforeEach(async function () {
      under = await factory(this);
      store = under.store;
    });
    afterEach(async () => {
      await under?.cleanup();
      under = undefined;
    });

    // Larger than one GridFS chunk (255 KiB) so ranges cross chunk borders.
    const big = randomBytes(600_000);

    it("stores a file and reads it back whole, with size, type and a stable etag", async () => {
      const before = Date.now();
      const put = await store.put("art1/1/full.mp3", big, "audio/mpeg");
      expect(put.size).to.equal(big.length);
      expect(put.contentType).to.equal("audio/mpeg");
      expect(put.etag).to.be.a("string").and.not.empty;
      expect(put.modified.getTime()).to.be.within(before - 2000, Date.now() + 2000);
      const st = await store.stat("art1/1/full.mp3");
      expect(st).to.deep.include({ size: big.length, etag: put.etag, contentType: "audio/mpeg" });
      expect((await collect(await store.read("art1/1/full.mp3"))).equals(big)).to.equal(true);
    });

    it("reads inclusive byte ranges, across chunk borders and up to the last byte", async () => {
      await store.put("art1/1/full.mp3", big, "audio/mpeg");
      for (const [start, end] of [[0, 0], [10, 19], [261_000, 262_500], [599_990, 599_999]]) {
        const got = await collect(await store.read("art1/1/full.mp3", { start, end }));
        expect(got.equals(big.subarray(start, end + 1)), `${start}-${end}`).to.equal(true);
      }
    });

    it("clamps a range end past the file and rejects a range that selects nothing", async () => {
      await store.put("a/b.mp3", Buffer.from("0123456789"), "audio/mpeg");
      expect((await collect(await store.read("a/b.mp3", { start: 7, end: 100 }))).toString()).to.equal("789");
      await store.read("a/b.mp3", { start: 10, end: 12 }).then(
        () => expect.fail("range past the end was accepted"),
        (e: Error) => expect(e).to.be.instanceOf(RangeError),
      );
    });

    it("reading a file that is not there (never written, or removed) rejects with ENOENT", async () => {
      await store.put("gone/1/transcript.vtt", Buffer.from("WEBVTT\n"), "text/vtt");
      await store.deletePrefix("gone/1/");
      for (const key of ["gone/1/transcript.vtt", "never/1/full.mp3"]) {
        await store.read(key).then(
          () => expect.fail(`${key} was read`),
          (e: NodeJS.ErrnoException) => expect(e.code, key).to.equal("ENOENT"),
        );
      }
    });

    it("gives the same etag to the same content and a different one to other content", async () => {
      const a = await store.put("x/1.mp3", Buffer.from("same"), "audio/mpeg");
      const b = await store.put("y/1.mp3", Buffer.from("same"), "audio/mpeg");
      const c = await store.put("z/1.mp3", Buffer.from("other"), "audio/mpeg");
      expect(a.etag).to.equal(b.etag);
      expect(c.etag).to.not.equal(a.etag);
    });

    it("replaces a file on a second put: readers get the new content and etag", async () => {
      const first = await store.put("art2/1/preview.mp3", Buffer.from("old content"), "audio/mpeg");
      const second = await store.put("art2/1/preview.mp3", Buffer.from("new content!"), "audio/mpeg");
      expect(second.etag).to.not.equal(first.etag);
      expect(await store.stat("art2/1/preview.mp3")).to.deep.include({ size: 12, etag: second.etag });
      expect((await collect(await store.read("art2/1/preview.mp3"))).toString()).to.equal("new content!");
    });

    it("never shows a partial file while a replacement is being written", async () => {
      const v1 = Buffer.alloc(400_000, 1);
      const v2 = Buffer.alloc(500_000, 2);
      await store.put("race/1/full.mp3", v1, "audio/mpeg");
      let writing = true;
      const writer = store.put("race/1/full.mp3", v2, "audio/mpeg").finally(() => (writing = false));
      let reads = 0;
      while (writing || reads === 0) {
        const st = await store.stat("race/1/full.mp3");
        expect(st, "file vanished during replacement").to.not.equal(null);
        const got = await collect(await store.read("race/1/full.mp3"));
        expect(got.equals(v1) || got.equals(v2), `read ${got.length} mixed/partial bytes`).to.equal(true);
        reads++;
      }
      await writer;
      expect((await collect(await store.read("race/1/full.mp3"))).equals(v2)).to.equal(true);
    });

    it("reports a missing file: stat → null, read → error", async () => {
      expect(await store.stat("nope/1/full.mp3")).to.equal(null);
      await store.read("nope/1/full.mp3").then(
        () => expect.fail("read of a missing file succeeded"),
        (e: Error) => expect(e.message).to.match(/not found/),
      );
    });

    it("deletes everything under a prefix and nothing else", async () => {
      await store.put("art3/1/full.mp3", Buffer.from("a"), "audio/mpeg");
      await store.put("art3/2/preview.mp3", Buffer.from("b"), "audio/mpeg");
      await store.put("art30/1/full.mp3", Buffer.from("c"), "audio/mpeg");
      await store.put("art4/1/full.mp3", Buffer.from("d"), "audio/mpeg");
      await store.deletePrefix("art3/");
      expect(await store.stat("art3/1/full.mp3")).to.equal(null);
      expect(await store.stat("art3/2/preview.mp3")).to.equal(null);
      expect(await store.stat("art30/1/full.mp3")).to.not.equal(null);
      expect(await store.stat("art4/1/full.mp3")).to.not.equal(null);
      await store.deletePrefix("missing/"); // nothing there: no error
    });

    it("a reader racing a prefix delete sees each file whole or not found, never an error", async function () {
      // A takedown removes files one by one while listeners still ask for them: every stat or
      // read in between must answer with the file or "not found" (a 404), never fail (a 500).
      // A few readers walk all the keys: one reader per key would queue 40 file operations
      // ahead of each removal in the I/O thread pool, and on a loaded machine the delete
      // (and the test) would crawl instead of racing.
      this.timeout(90_000);
      const own = store; // a timed-out run must never write into the next test's store
      const keys = Array.from({ length: 40 }, (_, i) => `race/${i}/transcript.srt`);
      const body = Buffer.from("1\n00:00:00,000 --> 00:00:01,000\nHello\n");
      const failures: string[] = [];
      let probes = 0;
      for (let round = 0; round < 5; round++) {
        for (const k of keys) await own.put(k, body, "application/x-subrip");
        let deleting = true;
        const deleted = own.deletePrefix("race/").finally(() => (deleting = false));
        const reader = async (first: number) => {
          for (let i = first; deleting; i = (i + 1) % keys.length) {
            const k = keys[i]!;
            probes++;
            const info = await own.stat(k).catch((e: Error) => (failures.push(`stat ${k}: ${e.message}`), null));
            if (info) expect(info.size).to.equal(body.length);
            await own.read(k).then(
              (r) => collect(r).then((b) => expect(b.equals(body), `partial read of ${k}`).to.equal(true)),
              (e: NodeJS.ErrnoException) => void (e.code !== "ENOENT" && failures.push(`read ${k}: ${e.message}`)),
            );
          }
        };
        await Promise.all([deleted, ...[0, 10, 20, 30].map(reader)]);
      }
      expect(failures).to.deep.equal([]);
      expect(probes, "the readers raced the deletes").to.be.greaterThan(0);
      expect(await own.list!("race/")).to.deep.equal([]);
    });

    it("lists the keys under a prefix, or all of them, each once", async () => {
      await store.put("art3/1/full.mp3", Buffer.from("a"), "audio/mpeg");
      await store.put("art3/1/full.mp3", Buffer.from("a2"), "audio/mpeg"); // a second version of one key
      await store.put("art3/2/preview.mp3", Buffer.from("b"), "audio/mpeg");
      await store.put("art30/1/full.mp3", Buffer.from("c"), "audio/mpeg");
      expect((await store.list!("art3/")).sort()).to.deep.equal(["art3/1/full.mp3", "art3/2/preview.mp3"]);
      expect((await store.list!("")).sort()).to.deep.equal(["art3/1/full.mp3", "art3/2/preview.mp3", "art30/1/full.mp3"]);
      expect(await store.list!("none/")).to.deep.equal([]);
    });

    it("refuses unsafe keys and an empty prefix, changing nothing", async () => {
      await store.put("keep/1/full.mp3", Buffer.from("k"), "audio/mpeg");
      for (const key of ["../etc/passwd", "a/../../b.mp3", "/abs.mp3", "a//b.mp3", ".meta/x.json", ""]) {
        await store.put(key, Buffer.from("x"), "audio/mpeg").then(
          () => expect.fail(`accepted ${key}`),
          (e: Error) => expect(e.message).to.match(/unsafe storage key/),
        );
      }
      await store.deletePrefix("").then(
        () => expect.fail("empty prefix accepted"),
        (e: Error) => expect(e.message).to.match(/prefix/),
      );
      expect(await store.stat("keep/1/full.mp3")).to.not.equal(null);
    });
  });
}
