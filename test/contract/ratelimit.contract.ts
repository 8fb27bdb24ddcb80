// The bucket-store contract: every store (memory, NATS KV) hands out the same
// tokens for the same sequence of takes, and two handles on one shared store
// never hand out a token twice.
import { expect } from "chai";
import type { BucketStore } from "../../lib/ratelimit/port.js";

export interface BucketFixture {
  /** Two handles on the same shared buckets (for NATS: two connections). */
  a: BucketStore;
  b: BucketStore;
  /** Moves the clock both handles read. */
  advance(ms: number): void;
  cleanup(): Promise<void>;
}

let seq = 0;
const key = () => `proj-${process.pid}-${Date.now()}-${++seq}.writes`;

export function bucketStoreContract(name: string, make: (ctx: Mocha.Context) => Promise<BucketFixture>): void {
  describe(`bucket store contract: ${name}`, function () {
    let f: BucketFixture;
    beforeEach(async function () {
      f = await make(this);
    });
    afterEach(async () => f?.cleanup());

    it("a fresh bucket grants up to its burst, then refuses with the wait for one token", async () => {
      const k = key();
      const first = await f.a.take(k, 15, { perSecond: 10, burst: 20 });
      expect(first).to.include({ granted: 15, remaining: 5, retryAfterMs: 0 });
      const second = await f.a.take(k, 15, { perSecond: 10, burst: 20 });
      expect(second).to.include({ granted: 5, remaining: 0 });
      const refused = await f.a.take(k, 1, { perSecond: 10, burst: 20 });
      expect(refused.granted).to.equal(0);
      expect(refused.retryAfterMs).to.equal(100);
      expect(refused.fullInMs).to.equal(2000);
    });

    it("refills by elapsed time and never beyond the burst", async () => {
      const k = key();
      const p = { perSecond: 10, burst: 20 };
      await f.a.take(k, 20, p);
      f.advance(500);
      expect((await f.a.take(k, 100, p)).granted).to.equal(5);
      f.advance(60_000);
      expect((await f.a.take(k, 100, p)).granted).to.equal(20);
    });

    it("keeps keys apart", async () => {
      const k1 = key();
      const k2 = key();
      const p = { perSecond: 1, burst: 3 };
      expect((await f.a.take(k1, 3, p)).granted).to.equal(3);
      expect((await f.a.take(k1, 1, p)).granted).to.equal(0);
      expect((await f.a.take(k2, 3, p)).granted).to.equal(3);
    });

    it("a lowered burst caps a bucket that was fuller", async () => {
      const k = key();
      await f.a.take(k, 1, { perSecond: 10, burst: 100 });
      expect((await f.a.take(k, 1000, { perSecond: 10, burst: 5 })).granted).to.equal(5);
    });

    it("two handles taking at once never grant more than the bucket holds", async () => {
      const k = key();
      const p = { perSecond: 0.001, burst: 25 };
      const takes = Array.from({ length: 60 }, (_, i) => (i % 2 ? f.a : f.b).take(k, 1, p));
      const granted = (await Promise.all(takes)).reduce((s, r) => s + r.granted, 0);
      expect(granted).to.equal(25);
      expect((await f.b.take(k, 1, p)).granted).to.equal(0);
    });
  });
}
