import { randomBytes } from "node:crypto";
import { expect } from "chai";
import { connect } from "nats";
import { createMemoryBus } from "../../lib/bus/memory.js";
import { createNatsBus, laneToken, REFRESH_MS } from "../../lib/bus/nats.js";
import { logger } from "../../lib/log.js";
import type { Delivery } from "../../lib/bus/port.js";
import { requireNats, startNatsServer, type LocalNatsServer } from "../support/servers.js";
import { waitFor as pollFor } from "../support/http.js";
import { sleep, waitFor } from "../support/wait.js";
import { busContract } from "./bus.contract.js";

const log = logger("bus-test");
const run = randomBytes(3).toString("hex");
let n = 0;

/** Unique stream/subject/durable per test so runs never see each other's jobs. */
function names() {
  n += 1;
  return { stream: `T_${run}_${n}`, subject: `test.${run}.${n}.jobs`, durable: `w_${run}_${n}` };
}

async function deleteStream(url: string, stream: string): Promise<void> {
  const nc = await connect({ servers: url });
  try {
    const jsm = await nc.jetstreamManager();
    await jsm.streams.delete(stream).catch(() => undefined);
  } finally {
    await nc.close();
  }
}

busContract("memory", async () => {
  const bus = createMemoryBus();
  return { bus, cleanup: () => bus.close() };
});

busContract("NATS JetStream", async (ctx) => {
  const url = await requireNats(ctx);
  const nm = names();
  const bus = await createNatsBus({ url, log, ...nm });
  return {
    bus,
    cleanup: async () => {
      await bus.close();
      await deleteStream(url, nm.stream);
    },
  };
});

describe("memory bus specifics", () => {
  it("forgets a job id once the duplicate window has passed", async () => {
    const bus = createMemoryBus({ duplicateWindowMs: 100 });
    const seen: number[] = [];
    await bus.consume(async (d) => void seen.push(d.attempt), { concurrency: 1, maxAttempts: 1, ackWaitMs: 1000, backoffMs: [], onExhausted: async () => undefined });
    const j = { articleId: "a", projectId: "p", revision: 1 };
    await bus.publish(j);
    await bus.publish(j);
    await sleep(150);
    await bus.publish(j);
    await waitFor(() => seen.length === 2, "second delivery");
    await sleep(50);
    expect(seen).to.have.length(2);
    await bus.close();
  });

  it("delivers events to subscribers whose pattern matches", async () => {
    const bus = createMemoryBus();
    const got: string[] = [];
    const off = bus.subscribeEvents("articles.events.*", (s) => got.push(s));
    bus.subscribeEvents("articles.>", (s) => got.push(`all:${s}`));
    await bus.publishEvent("articles.events.p1", { id: 1 });
    await bus.publishEvent("other.events.p1", {});
    await bus.publishEvent("articles.events.p1.extra", {});
    off();
    await bus.publishEvent("articles.events.p2", {});
    expect(got).to.deep.equal(["articles.events.p1", "all:articles.events.p1", "all:articles.events.p1.extra", "all:articles.events.p2"]);
    await bus.close();
  });

  it("rejects publish after close", async () => {
    const bus = createMemoryBus();
    await bus.close();
    await bus.publish({ articleId: "a", projectId: "p", revision: 1 }).then(
      () => expect.fail("publish succeeded on a closed bus"),
      (e: Error) => expect(e.message).to.match(/closed/),
    );
  });
});

describe("NATS bus under broker faults", function () {
  this.timeout(60_000);
  let server: LocalNatsServer | undefined;

  before(async function () {
    await requireNats(this); // skips/fails the same way when nats-server is missing
    server = await startNatsServer();
  });
  after(async () => server?.stop());

  it("rejects publish while NATS is down and resumes delivery after it returns", async () => {
    const nm = names();
    const bus = await createNatsBus({ url: server!.url, log, ...nm, publishTimeoutMs: 2000 });
    const seen: Delivery[] = [];
    await bus.consume(async (d) => void seen.push(d), { concurrency: 1, maxAttempts: 3, ackWaitMs: 2000, backoffMs: [100], onExhausted: async () => undefined });
    await bus.publish({ articleId: "before", projectId: "p", revision: 1 });
    await waitFor(() => seen.length === 1, "delivery before the outage");

    await server!.stop();
    await sleep(300);
    const t0 = Date.now();
    let error: Error | undefined;
    await bus.publish({ articleId: "during", projectId: "p", revision: 1 }).catch((e: Error) => (error = e));
    expect(error?.message).to.match(/NATS/);
    // Refused by its 2 s publish timeout at the latest, not held until NATS returns; the margin
    // is for a loaded machine's timers.
    expect(Date.now() - t0).to.be.below(10_000);

    await server!.restart();
    await waitFor(() => {
      void bus.publish({ articleId: "after", projectId: "p", revision: 1 }).catch(() => undefined);
      return seen.some((d) => d.job.articleId === "after");
    }, "delivery after NATS came back", 20_000);
    expect(seen.map((d) => d.job.articleId)).to.not.include("during");
    await bus.close();
  });

  it("shares one durable consumer between two bus instances (two workers)", async () => {
    const nm = names();
    const a = await createNatsBus({ url: server!.url, log, ...nm });
    const b = await createNatsBus({ url: server!.url, log, ...nm });
    const got: Record<string, string[]> = { a: [], b: [] };
    const o = { concurrency: 1, maxAttempts: 3, ackWaitMs: 2000, backoffMs: [100], onExhausted: async () => undefined };
    await a.consume(async (d) => {
      got.a.push(d.job.articleId);
      await sleep(100);
    }, o);
    await b.consume(async (d) => {
      got.b.push(d.job.articleId);
      await sleep(100);
    }, o);
    for (let i = 0; i < 6; i++) await a.publish({ articleId: `x${i}`, projectId: "p", revision: 1 });
    await waitFor(() => got.a.length + got.b.length === 6, "all jobs", 10_000).catch((e: Error) => {
      throw new Error(`${e.message}; got ${JSON.stringify(got)}`);
    });
    expect(new Set([...got.a, ...got.b]).size).to.equal(6);
    expect(got.b.length).to.be.greaterThan(0);
    await a.close();
    await b.close();
  });
});

describe("NATS bus lanes", function () {
  this.timeout(60_000);

  it("still delivers jobs queued on the bare subject by an older version", async function () {
    const url = await requireNats(this);
    const nm = names();
    const bus = await createNatsBus({ url, log, ...nm });
    const nc = await connect({ servers: url });
    try {
      await nc.jetstream().publish(nm.subject, new TextEncoder().encode(JSON.stringify({ articleId: "old", projectId: "p", revision: 1 })), { msgID: "old:1" });
      const seen: string[] = [];
      await bus.consume(async (d) => void seen.push(d.job.articleId), { concurrency: 1, maxAttempts: 3, ackWaitMs: 2000, backoffMs: [100], onExhausted: async () => undefined });
      await bus.publish({ articleId: "new", projectId: "p", revision: 1 });
      // A bound on liveness, not a speed target: beside two CPU-bound processes a delivery from
      // the bare subject (read beside the lanes) can take seconds.
      await waitFor(() => seen.length === 2, "both jobs", 30_000);
      expect(seen.sort()).to.deep.equal(["new", "old"]);
      // A job is acknowledged after its handler returns: on a loaded machine the second ack can
      // still be on its way when the handler's push is seen, so the stream is polled until empty.
      const left = await pollFor("an empty stream", async () => {
        const b = await bus.backlog!();
        if (b.pending > 0 || b.unacked > 0) throw new Error(`backlog ${JSON.stringify(b)}`);
        return b;
      }, 10_000, 50);
      expect(left).to.deep.equal({ pending: 0, unacked: 0 });
    } finally {
      await bus.close();
      await nc.close();
      await deleteStream(url, nm.stream);
    }
  });

  it("keeps turns fair with two worker replicas sharing the per-project consumers", async function () {
    const url = await requireNats(this);
    const nm = names();
    const a = await createNatsBus({ url, log, ...nm });
    const b = await createNatsBus({ url, log, ...nm });
    try {
      const order: string[] = [];
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      const handler = async (d: Delivery) => {
        order.push(`${d.job.projectId}/${d.job.articleId}`);
        if (order.length <= 2) await gate;
      };
      const o = { concurrency: 1, maxAttempts: 3, ackWaitMs: 5000, backoffMs: [100], onExhausted: async () => undefined };
      await a.consume(handler, o);
      await b.consume(handler, o);
      await a.publish({ articleId: "f0", projectId: "flood", revision: 1 });
      await a.publish({ articleId: "f1", projectId: "flood", revision: 1 });
      await waitFor(() => order.length === 2, "both replicas busy with the flood");
      for (let i = 2; i < 40; i++) await b.publish({ articleId: `f${i}`, projectId: "flood", revision: 1 });
      await a.publish({ articleId: "q", projectId: "quiet", revision: 1 });
      // Each replica learns of the quiet project from its doorbell, or, should that come late (a busy
      // machine), from the stream itself: a replica last read it before it took its first job, so once
      // REFRESH_MS has passed it reads it again before it takes the next.
      await sleep(REFRESH_MS + 100);
      release();
      await waitFor(() => order.length >= 4, "the next deliveries", 10_000);
      // One job per replica was in hand; the quiet project's job is among the next two (one per replica).
      expect(order.slice(2, 4), order.slice(0, 6).join(", ")).to.include("quiet/q");
      await waitFor(() => order.length === 41, "every job", 20_000);
      expect(new Set(order).size).to.equal(41);
    } finally {
      await a.close();
      await b.close();
      await deleteStream(url, nm.stream);
    }
  });

  it("gives projects whose ids are not subject tokens lanes of their own", async function () {
    const url = await requireNats(this);
    const nm = names();
    const bus = await createNatsBus({ url, log, ...nm });
    try {
      const seen: string[] = [];
      await bus.consume(async (d) => void seen.push(d.job.projectId), { concurrency: 1, maxAttempts: 3, ackWaitMs: 2000, backoffMs: [100], onExhausted: async () => undefined });
      await bus.publish({ articleId: "x", projectId: "odd.project *>", revision: 1 });
      await bus.publish({ articleId: "y", projectId: "plain", revision: 1 });
      await waitFor(() => seen.length === 2, "both jobs", 10_000);
      expect(seen.sort()).to.deep.equal(["odd.project *>", "plain"]);
      expect(laneToken("odd.project *>")).to.match(/^h_[0-9a-f]{32}$/);
      expect(laneToken("plain")).to.equal("plain");
    } finally {
      await bus.close();
      await deleteStream(url, nm.stream);
    }
  });
});
