// lib/bus/js-publisher.ts against a real NATS server: acknowledgements, the
// stream's deduplication, a subject no stream captures, and silence.
import { randomBytes } from "node:crypto";
import { expect } from "chai";
import { connect, RetentionPolicy, type NatsConnection } from "nats";
import { jsPublisher, type JsPublisher } from "../../lib/bus/js-publisher.js";
import { requireNats } from "../support/servers.js";

describe("JetStream publisher (one inbox, no request per publish)", function () {
  this.timeout(30_000);
  const run = randomBytes(3).toString("hex");
  const stream = `PUB_${run}`;
  const subject = `pub.${run}`;
  let nc: NatsConnection;
  let pub: JsPublisher;
  const data = (s: string) => new TextEncoder().encode(s);

  before(async function () {
    nc = await connect({ servers: await requireNats(this) });
    await (await nc.jetstreamManager()).streams.add({ name: stream, subjects: [`${subject}.>`], retention: RetentionPolicy.Workqueue });
    pub = jsPublisher(nc);
  });

  after(async () => {
    pub?.close();
    await (await nc?.jetstreamManager())?.streams.delete(stream).catch(() => undefined);
    await nc?.close();
  });

  it("answers each of many concurrent publishes with its own sequence number, and every message is stored", async () => {
    const acks = await Promise.all(Array.from({ length: 200 }, (_, i) => pub.publish(`${subject}.a`, data(`m${i}`), `id-${run}-${i}`, 5_000)));
    const seqs = acks.map((a) => a.seq);
    expect(new Set(seqs).size).to.equal(200);
    expect(acks.every((a) => !a.duplicate)).to.equal(true);
    const info = await (await nc.jetstreamManager()).streams.info(stream);
    expect(info.state.messages).to.equal(200);
  });

  it("reports a message id the stream has seen as a duplicate, and stores it once", async () => {
    const first = await pub.publish(`${subject}.b`, data("x"), `dup-${run}`, 5_000);
    const again = await pub.publish(`${subject}.b`, data("x"), `dup-${run}`, 5_000);
    expect(first.duplicate).to.equal(false);
    expect(again).to.deep.equal({ seq: first.seq, duplicate: true });
  });

  it("rejects a publish to a subject no stream captures at once, not after the timeout", async () => {
    const TIMEOUT_MS = 20_000;
    const started = Date.now();
    let err: Error | undefined;
    await pub.publish(`nostream.${run}`, data("x"), `none-${run}`, TIMEOUT_MS).catch((e: Error) => (err = e));
    // The 503 (no responders) is the answer, not the timeout's "no acknowledgement within".
    expect(err?.message).to.match(/no acknowledgement: 503/);
    expect(Date.now() - started).to.be.below(TIMEOUT_MS);
  });

  it("times out a publish nobody answers, and close() fails what still waits", async () => {
    // A plain subscriber answers nothing: the message is delivered, no acknowledgement comes.
    const silent = nc.subscribe(`silent.${run}`);
    try {
      let err: Error | undefined;
      const started = Date.now();
      await pub.publish(`silent.${run}`, data("x"), `silent-${run}`, 300).catch((e: Error) => (err = e));
      expect(err?.message).to.equal("no acknowledgement within 300 ms");
      // Not before its own timeout (timers never fire early); the upper bound only tells it from the 10 s one below.
      expect(Date.now() - started).to.be.at.least(250).and.below(10_000);

      const other = jsPublisher(nc);
      const pending = other.publish(`silent.${run}`, data("x"), `silent2-${run}`, 10_000);
      other.close();
      let closed: Error | undefined;
      await pending.catch((e: Error) => (closed = e));
      expect(closed?.message).to.match(/closed before the publish was acknowledged/);
    } finally {
      silent.unsubscribe();
    }
  });
});
