// The listening-event channel between the articles service's ingest (the
// RecordListening call) and its aggregator. In one process it is a direct
// call; on the full stack events travel through a JetStream stream, so a
// burst of player beacons is absorbed by the broker, any articles replica
// aggregates them, and a restart loses nothing that was acknowledged.
import { AckPolicy, connect, DeliverPolicy, JSONCodec, nanos, RetentionPolicy, StorageType, type ConsumerMessages, type NatsConnection } from "nats";
import type { Logger } from "../log.js";

export interface ListeningChannel<T> {
  send(batch: T): Promise<void>;
  /** One handler per process; a batch is acknowledged once it resolves (redelivered if it throws). */
  consume(handler: (batch: T) => Promise<void>): Promise<void>;
  close(): Promise<void>;
}

export function directListeningChannel<T>(): ListeningChannel<T> {
  let handler: ((batch: T) => Promise<void>) | undefined;
  return {
    async send(batch) {
      if (!handler) throw new Error("no listening-event consumer in this process");
      await handler(batch);
    },
    async consume(h) {
      handler = h;
    },
    async close() {
      handler = undefined;
    },
  };
}

export interface NatsListeningOptions {
  url: string;
  log: Logger;
  /** Stream and durable names; tests give each run its own. */
  stream?: string;
  subject?: string;
  durable?: string;
}

/** Stream and consumer names beside a configured job stream, so parallel stacks on one server stay apart. */
export function listeningNames(jobStream: string | undefined): Pick<NatsListeningOptions, "stream" | "subject" | "durable"> {
  if (!jobStream) return {};
  return { stream: `${jobStream}_LISTENING`, subject: `${jobStream.toLowerCase()}.listening`, durable: `${jobStream}-listening` };
}

export async function natsListeningChannel<T>(o: NatsListeningOptions): Promise<ListeningChannel<T>> {
  const stream = o.stream ?? "LISTENING_EVENTS";
  const subject = o.subject ?? "listening.events";
  const durable = o.durable ?? "listening-aggregators";
  const log = o.log.child({ component: "listening-channel" });
  const codec = JSONCodec<T>();
  const nc: NatsConnection = await connect({ servers: o.url, name: `article-audio:${durable}`, maxReconnectAttempts: -1, reconnectTimeWait: 1000 });
  const jsm = await nc.jetstreamManager();
  try {
    await jsm.streams.info(stream);
  } catch {
    // Analytics: a day of events at most, bounded in size; old ones give way.
    await jsm.streams.add({ name: stream, subjects: [subject], retention: RetentionPolicy.Workqueue, storage: StorageType.File, max_age: nanos(24 * 3_600_000), max_bytes: 256 * 1024 * 1024 });
  }
  const js = nc.jetstream();
  let messages: ConsumerMessages | undefined;
  let loop: Promise<void> | undefined;

  return {
    async send(batch) {
      await js.publish(subject, codec.encode(batch), { timeout: 5_000 });
    },
    async consume(handler) {
      try {
        await jsm.consumers.info(stream, durable);
      } catch {
        await jsm.consumers.add(stream, { durable_name: durable, ack_policy: AckPolicy.Explicit, deliver_policy: DeliverPolicy.All, filter_subject: subject, ack_wait: nanos(30_000), max_deliver: 5 });
      }
      const consumer = await js.consumers.get(stream, durable);
      messages = await consumer.consume({ max_messages: 200 });
      loop = (async () => {
        for await (const m of messages!) {
          try {
            await handler(codec.decode(m.data));
            m.ack();
          } catch (err) {
            log.warn({ err }, "listening batch not aggregated; it will be redelivered");
            m.nak(1_000);
          }
        }
      })();
    },
    async close() {
      await messages?.close();
      await loop?.catch(() => undefined);
      if (!nc.isClosed()) await nc.drain();
    },
  };
}
