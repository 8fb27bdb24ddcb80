// The leasing limiter: few store round trips, refusals remembered locally,
// the shared limit held across replicas within the documented tolerance.
import { expect } from "chai";
import { createRateLimiter } from "../../lib/ratelimit/limiter.js";
import { createMemoryBucketStore } from "../../lib/ratelimit/memory.js";
import type { BucketStore } from "../../lib/ratelimit/port.js";

function counted(store: BucketStore) {
  const c = { calls: 0 };
  return {
    c,
    store: { take: (k: string, w: number, p: Parameters<BucketStore["take"]>[2]) => (c.calls++, store.take(k, w, p)), close: () => store.close() } as BucketStore,
  };
}

describe("rate limiter (leased tokens)", () => {
  let t = 1_700_000_000_000;
  const now = () => t;

  it("takes tokens from the store in batches and remembers a refusal until the bucket refills", async () => {
    const { store, c } = counted(createMemoryBucketStore({ now }));
    const limiter = createRateLimiter({ store, now });
    const p = { perSecond: 100, burst: 100 };
    let allowed = 0;
    for (let i = 0; i < 100; i++) if ((await limiter.take("a.reads", p)).allowed) allowed++;
    expect(allowed).to.equal(100);
    expect(c.calls).to.equal(10);
    const refused = await limiter.take("a.reads", p);
    expect(refused).to.include({ allowed: false });
    expect(refused.retryAfterMs).to.equal(10);
    const calls = c.calls;
    for (let i = 0; i < 50; i++) expect((await limiter.take("a.reads", p)).allowed).to.equal(false);
    expect(c.calls, "refusals are answered locally").to.equal(calls);
    t += 100;
    expect((await limiter.take("a.reads", p)).allowed).to.equal(true);
  });

  it("two replicas over one store admit at most the burst, and at most one lease per other replica less", async () => {
    const shared = createMemoryBucketStore({ now });
    const a = createRateLimiter({ store: shared, now });
    const b = createRateLimiter({ store: shared, now });
    const p = { perSecond: 100, burst: 30 }; // lease: 3 tokens
    const results = await Promise.all(Array.from({ length: 100 }, (_, i) => (i % 2 ? a : b).take("p.writes", p)));
    const allowed = results.filter((r) => r.allowed).length;
    expect(allowed).to.be.within(27, 30);
  });

  it("admits while the store is down, and says so", async () => {
    const errors: unknown[] = [];
    let calls = 0;
    const broken: BucketStore = { take: async () => (calls++, Promise.reject(new Error("kv down"))), close: async () => {} };
    const limiter = createRateLimiter({ store: broken, now, onStoreError: (e) => errors.push(e), leaseSize: () => 1 });
    for (let i = 0; i < 20; i++) {
      expect((await limiter.take("x.reads", { perSecond: 1, burst: 1 })).allowed).to.equal(true);
      t += 100;
    }
    expect(errors).to.have.length(1);
    expect(calls, "the store is left alone for a while after a failure").to.equal(1);
    t += 5_000;
    await limiter.take("x.reads", { perSecond: 1, burst: 1 });
    expect(calls).to.equal(2);
  });

  it("a changed policy applies at once", async () => {
    const limiter = createRateLimiter({ store: createMemoryBucketStore({ now }), now, leaseSize: () => 1 });
    expect((await limiter.take("c.writes", { perSecond: 0.01, burst: 1 })).allowed).to.equal(true);
    expect((await limiter.take("c.writes", { perSecond: 0.01, burst: 1 })).allowed).to.equal(false);
    // Raised limits: the bucket refills toward the new burst from where it was.
    t += 1000;
    expect((await limiter.take("c.writes", { perSecond: 10, burst: 5 })).allowed).to.equal(true);
  });
  it("decides at once (takeNow) with the in-process store, exactly as take() does, so a counted request needs no promise", async () => {
    const p = { perSecond: 10, burst: 5 };
    const sync = createRateLimiter({ store: createMemoryBucketStore({ now }), now, leaseSize: () => 1 });
    const async = createRateLimiter({ store: createMemoryBucketStore({ now }), now, leaseSize: () => 1 });
    for (let i = 0; i < 12; i++) {
      const d = sync.takeNow("s.reads", p);
      expect(d, `take ${i} is decided without waiting`).to.not.equal(undefined);
      expect(d).to.deep.equal(await async.take("s.reads", p));
      if (i === 7) t += 250; // 2.5 tokens come back
    }
  });

  it("leaves takeNow undecided while only a shared store can say, then spends the lease it took without waiting", async () => {
    const { store, c } = counted(createMemoryBucketStore({ now }));
    const limiter = createRateLimiter({ store, now });
    const p = { perSecond: 100, burst: 100 }; // lease: 10 tokens
    expect(limiter.takeNow("l.reads", p)).to.equal(undefined);
    expect((await limiter.take("l.reads", p)).allowed).to.equal(true);
    for (let i = 0; i < 9; i++) expect(limiter.takeNow("l.reads", p)?.allowed, `leased token ${i}`).to.equal(true);
    expect(limiter.takeNow("l.reads", p)).to.equal(undefined);
    expect(c.calls).to.equal(1);
  });
});
