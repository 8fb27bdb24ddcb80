import { randomBytes } from "node:crypto";
import { connect } from "nats";
import { createMemoryBucketStore } from "../../lib/ratelimit/memory.js";
import { createNatsKvBucketStore } from "../../lib/ratelimit/nats-kv.js";
import { requireNats } from "../support/servers.js";
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
  const a = await createNatsKvBucketStore({ url, bucket, now: c.now });
  const b = await createNatsKvBucketStore({ url, bucket, now: c.now });
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
