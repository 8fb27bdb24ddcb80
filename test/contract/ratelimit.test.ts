import { randomBytes } from "node:crypto";
import { connect } from "nats";
import { createMemoryBucketStore } from "../../lib/ratelimit/memory.js";
import { createNatsKvBucketStore } from "../../lib/ratelimit/nats-kv.js";
import { expect } from "chai";
import { createRateLimiter } from "../../lib/ratelimit/limiter.js";
import { requireNats, startNatsServer, type LocalNatsServer } from "../support/servers.js";
import { waitFor } from "../support/http.js";
import { bucketStoreContract } from "./ratelimit.contract.js";

function clock() {
  let t = 1_700_000_000_000;
  return { now: () => t, advance: (ms: number) => void (t += ms) };
}

bucketStoreContract("memory", async () => {
  const c = clock();
  const store = createMemoryBucketStore({ now: c.now });
  return { a: store, b: store, advance: c.advance, cleanup: () => store.close() };
});

bucketStoreContract("NATS KV", async (ctx) => {
  const url = await requireNats(ctx);
  const bucket = `rl_test_${randomBytes(4).toString("hex")}`;
  const c = clock();
  const a = await createNatsKvBucketStore({ url, bucket, now: c.now, timeoutMs: 20_000 });
  const b = await createNatsKvBucketStore({ url, bucket, now: c.now, timeoutMs: 20_000 });
  return {
    a,
    b,
    advance: c.advance,
    async cleanup() {
      await a.close();
      await b.close();
      const nc = await connect({ servers: url });
      await (await nc.jetstreamManager()).streams.delete(`KV_${bucket}`).catch(() => undefined);
      await nc.close();
    },
  };
});

describe("NATS KV bucket store during a NATS outage", function () {
  this.timeout(120_000);
  let server: LocalNatsServer | undefined;
  after(async () => server?.stop());

  it("fails fast while NATS is away (the limiter then admits), and works again after it is back", async function () {
    await requireNats(this); // skips (or fails in CI) the same way when nats-server is missing
    server = await startNatsServer();
    const store = await createNatsKvBucketStore({ url: server.url, bucket: "rl_outage", timeoutMs: 500 });
    const limiter = createRateLimiter({ store, leaseSize: () => 1, onStoreError: () => {} });
    const p = { perSecond: 0.001, burst: 2 };
    try {
      expect((await store.take("o.writes", 1, p)).granted).to.equal(1);
      await server.stop();
      const started = Date.now();
      expect((await limiter.take("o.writes", p)).allowed).to.equal(true);
      // By the store's own 500 ms timeout, not the NATS client's reconnect attempts (tens of seconds);
      // the margin is for a loaded machine's timers.
      expect(Date.now() - started).to.be.below(10_000);
      await server.restart();
      await waitFor("the KV answers again", async () => (await store.take("o.writes", 1, p).catch(() => undefined)) ?? undefined, 30_000, 200);
    } finally {
      await store.close();
    }
  });
});
