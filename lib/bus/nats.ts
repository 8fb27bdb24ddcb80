// NATS JetStream job bus (full stack). Jobs go to a work-queue stream with
// file storage; workers share one durable pull consumer with explicit acks.
// JetStream does the bookkeeping that survives crashes: deduplication by
// message id, ack-wait leases, delivery counts and the delivery limit.
import {
  AckPolicy,
  DeliverPolicy,
  Events,
  JSONCodec,
  RetentionPolicy,
  StorageType,
  connect,
  nanos,
  type ConsumerMessages,
  type JetStreamClient,
  type JetStreamManager,
  type JsMsg,
  type NatsConnection,
} from "nats";
import type { Logger } from "../log.js";
import {
  HandBackError,
  PermanentJobError,
  jobMessageId,
  type AudioJob,
  type ConsumeOptions,
  type JobBus,
  type JobHandler,
  type JobSubscription,
} from "./port.js";

export interface NatsBusOptions {
  url: string;
  log: Logger;
  stream?: string;
  subject?: string;
  durable?: string;
  duplicateWindowMs?: number;
  /** How long publish waits for the stream's acknowledgement. */
  publishTimeoutMs?: number;
}

const codec = JSONCodec<unknown>();
const FETCH_EXPIRES_MS = 5000;

export async function createNatsBus(o: NatsBusOptions): Promise<JobBus> {
  const stream = o.stream ?? "AUDIO_JOBS";
  const subject = o.subject ?? "audio.jobs";
  const durable = o.durable ?? "audio-workers";
  const log = o.log.child({ component: "nats-bus" });
  const publishTimeoutMs = o.publishTimeoutMs ?? 5000;

  let nc: NatsConnection;
  try {
    nc = await connect({
      servers: o.url,
      name: `article-audio:${durable}`,
      // Never give up: a broker restart must not need a worker restart.
      maxReconnectAttempts: -1,
      reconnectTimeWait: 1000,
      pingInterval: 10_000,
    });
  } catch (err) {
    throw new Error(`cannot connect to NATS at ${redactUrl(o.url)}: ${(err as Error).message}`);
  }

  let connected = true;
  const subscriptions = new Set<NatsSubscription>();
  const reconnectListeners: Array<() => void> = [];
  void (async () => {
    for await (const s of nc.status()) {
      if (s.type === Events.Disconnect) {
        connected = false;
        log.warn({ server: s.data }, "NATS disconnected, reconnecting");
      } else if (s.type === Events.Reconnect) {
        connected = true;
        log.info({ server: s.data }, "NATS reconnected");
        // A pull request made to the old connection may never be answered.
        for (const sub of subscriptions) sub.repull();
        for (const listener of reconnectListeners) {
          try {
            listener();
          } catch (err) {
            log.error({ err }, "NATS reconnect listener failed");
          }
        }
      } else if (s.type === Events.Error) {
        log.error({ err: s.data }, "NATS error");
      }
    }
  })().catch(() => undefined);

  const jsm = await nc.jetstreamManager();
  await ensureStream(jsm, stream, subject, o.duplicateWindowMs ?? 120_000);
  const js = nc.jetstream();

  return {
    async publish(job) {
      if (nc.isClosed()) throw new Error("job bus is closed");
      // While reconnecting the client would buffer and the publish time out
      // later; fail now so the caller leaves the job to the reconciler.
      if (!connected) throw new Error("NATS is unreachable: job not published");
      const msgID = jobMessageId(job);
      try {
        const ack = await js.publish(subject, codec.encode(job), { msgID, timeout: publishTimeoutMs });
        if (ack.duplicate) log.debug({ msgID }, "duplicate job dropped by the stream");
      } catch (err) {
        throw new Error(`NATS publish of ${msgID} failed: ${(err as Error).message}`);
      }
    },

    async consume(handler, opts) {
      if (!(opts.concurrency >= 1) || !(opts.maxAttempts >= 1) || !(opts.ackWaitMs > 0)) {
        throw new Error("consume: concurrency and maxAttempts must be >= 1 and ackWaitMs > 0");
      }
      await ensureConsumer(jsm, stream, subject, durable, opts);
      const sub = new NatsSubscription(js, stream, durable, handler, opts, log);
      subscriptions.add(sub);
      sub.start();
      return {
        async drain() {
          await sub.drain();
          subscriptions.delete(sub);
        },
      };
    },

    onReconnect(listener) {
      reconnectListeners.push(listener);
    },

    async publishEvent(subj, data) {
      if (nc.isClosed()) throw new Error("job bus is closed");
      nc.publish(subj, codec.encode(data));
    },

    async backlog() {
      const info = await jsm.consumers.info(stream, durable);
      return { pending: info.num_pending, unacked: info.num_ack_pending };
    },

    async close() {
      await Promise.all([...subscriptions].map((s) => s.stop()));
      subscriptions.clear();
      if (!nc.isClosed()) await nc.close();
    },
  };
}

async function ensureStream(jsm: JetStreamManager, name: string, subject: string, dupMs: number): Promise<void> {
  const config = {
    name,
    subjects: [subject],
    retention: RetentionPolicy.Workqueue,
    storage: StorageType.File,
    duplicate_window: nanos(dupMs),
  };
  try {
    await jsm.streams.info(name);
  } catch {
    await jsm.streams.add(config);
    return;
  }
  // Retention and storage cannot change on an existing stream; the rest can.
  await jsm.streams.update(name, { subjects: config.subjects, duplicate_window: config.duplicate_window });
}

async function ensureConsumer(jsm: JetStreamManager, stream: string, subject: string, durable: string, opts: ConsumeOptions): Promise<void> {
  const config = {
    durable_name: durable,
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    filter_subject: subject,
    ack_wait: nanos(opts.ackWaitMs),
    max_deliver: opts.maxAttempts,
    max_ack_pending: Math.max(1000, opts.concurrency * 4),
  };
  try {
    await jsm.consumers.info(stream, durable);
  } catch {
    await jsm.consumers.add(stream, config);
    return;
  }
  await jsm.consumers.update(stream, durable, {
    ack_wait: config.ack_wait,
    max_deliver: config.max_deliver,
    max_ack_pending: config.max_ack_pending,
  });
}

/**
 * Pulls only as many messages as there are free handler slots, so no job sits
 * in a client buffer while its ack-wait lease runs out.
 */
class NatsSubscription {
  /** Each running handler and a promise that resolves once its lease lapsed. */
  private inHand = new Map<Promise<void>, Promise<void>>();
  private slotFreed: (() => void) | undefined;
  private fetch: ConsumerMessages | undefined;
  private stopping = false;
  private loop: Promise<void> | undefined;

  constructor(
    private js: JetStreamClient,
    private stream: string,
    private durable: string,
    private handler: JobHandler,
    private opts: ConsumeOptions,
    private log: Logger,
  ) {}

  start(): void {
    this.loop = this.run().catch((err) => this.log.error({ err }, "job consumer loop stopped"));
  }

  private async run(): Promise<void> {
    const consumer = await this.js.consumers.get(this.stream, this.durable);
    while (!this.stopping) {
      const free = this.opts.concurrency - this.inHand.size;
      if (free <= 0) {
        await new Promise<void>((r) => (this.slotFreed = r));
        continue;
      }
      let guard: NodeJS.Timeout | undefined;
      try {
        const batch = await consumer.fetch({ max_messages: free, expires: FETCH_EXPIRES_MS });
        this.fetch = batch;
        // Backstop for a pull the server forgot (restart, lost response).
        guard = setTimeout(() => batch.stop(), FETCH_EXPIRES_MS + 3000);
        for await (const m of batch) {
          if (this.stopping) {
            // Pulled after drain began: hand it straight back to the others.
            m.nak();
            continue;
          }
          this.handle(m);
        }
      } catch (err) {
        if (this.stopping) break;
        this.log.warn({ err: (err as Error).message }, "job fetch failed, retrying");
        await new Promise((r) => setTimeout(r, 1000));
      } finally {
        clearTimeout(guard);
        this.fetch = undefined;
      }
    }
  }

  private handle(m: JsMsg): void {
    // Mirrors the server's lease so drain() does not wait on a handler the
    // server has already given up on (it was redelivered elsewhere).
    let timer: NodeJS.Timeout | undefined;
    let lapse!: () => void;
    const lapsed = new Promise<void>((r) => (lapse = r));
    const arm = () => {
      clearTimeout(timer);
      timer = setTimeout(lapse, this.opts.ackWaitMs);
    };
    arm();
    const p = this.process(m, arm).finally(() => {
      clearTimeout(timer);
      lapse();
      this.inHand.delete(p);
      const wake = this.slotFreed;
      this.slotFreed = undefined;
      wake?.();
    });
    this.inHand.set(p, lapsed);
  }

  private async process(m: JsMsg, keepAlive: () => void): Promise<void> {
    let job: AudioJob;
    let attempt: number;
    try {
      const payload = codec.decode(m.data);
      job = parseJob(payload);
      // A job handed back earlier arrives as a new message that knows the attempts already used.
      attempt = attemptsUsedOf(payload) + m.info.redeliveryCount;
    } catch (err) {
      this.log.error({ err: (err as Error).message, seq: m.seq }, "malformed job dropped");
      m.term();
      return;
    }
    const log = this.log.child({ articleId: job.articleId, revision: job.revision, attempt, requestId: job.requestId });
    try {
      await this.handler({ job, attempt, working: () => {
          keepAlive();
          m.working();
        } });
      m.ack();
      return;
    } catch (err) {
      if (err instanceof HandBackError) {
        await this.handBack(m, job, attempt - 1, log);
        return;
      }
      if (err instanceof PermanentJobError) {
        log.warn({ err: err.message }, "job failed permanently, dropped");
        // No reason text: servers before 2.10.4 (Debian ships 2.9) do not
        // parse "+TERM <reason>" and would redeliver.
        m.term();
        return;
      }
      if (attempt >= this.opts.maxAttempts) {
        log.error({ err: (err as Error)?.message }, "job exhausted its attempts");
        try {
          await this.opts.onExhausted(job, err, attempt);
        } catch (e) {
          log.error({ err: (e as Error)?.message }, "onExhausted failed; the reconciler will pick the article up");
        }
        m.term();
        return;
      }
      const b = this.opts.backoffMs;
      const delay = b.length ? b[Math.min(attempt - 1, b.length - 1)] : 0;
      log.warn({ err: (err as Error)?.message, retryInMs: delay }, "job failed, will be redelivered");
      m.nak(delay);
    }
  }

  /**
   * JetStream counts every delivery of a message, a nak included. An
   * uncounted hand-back is therefore a new message carrying the attempts used
   * so far, published before the old one is acknowledged. Its id comes from
   * the old message's stream sequence, so handing the same message back twice
   * (after a crash between publish and ack) is deduplicated by the stream.
   */
  private async handBack(m: JsMsg, job: AudioJob, used: number, log: Logger): Promise<void> {
    try {
      await this.js.publish(m.subject, codec.encode({ ...job, attemptsUsed: used }), { msgID: `${jobMessageId(job)}:handback:${m.seq}` });
      m.ack();
      log.info({ attemptsUsed: used }, "job handed back without using up an attempt");
    } catch (err) {
      // Better a counted redelivery than none.
      log.warn({ err: (err as Error).message }, "hand-back publish failed; job redelivered as a normal retry");
      m.nak();
    }
  }

  /** Abandons the current pull so the loop issues a fresh one. */
  repull(): void {
    this.fetch?.stop();
  }

  async drain(): Promise<void> {
    this.stopping = true;
    this.slotFreed?.();
    this.fetch?.stop();
    await this.loop;
    await Promise.all([...this.inHand].map(([done, lapsed]) => Promise.race([done, lapsed])));
  }

  /** Like drain but does not wait for handlers (bus close). */
  async stop(): Promise<void> {
    this.stopping = true;
    this.slotFreed?.();
    this.fetch?.stop();
    await this.loop;
  }
}

function attemptsUsedOf(v: unknown): number {
  const n = (v as { attemptsUsed?: unknown } | null)?.attemptsUsed;
  return Number.isInteger(n) && (n as number) > 0 ? (n as number) : 0;
}

function parseJob(v: unknown): AudioJob {
  const o = v as Partial<AudioJob> | null;
  if (!o || typeof o.articleId !== "string" || typeof o.projectId !== "string" || !Number.isInteger(o.revision)) {
    throw new Error("not an AudioJob");
  }
  return {
    articleId: o.articleId,
    projectId: o.projectId,
    revision: o.revision as number,
    ...(typeof o.requestId === "string" ? { requestId: o.requestId } : {}),
  };
}

/** Credentials in a NATS URL must not reach an error message. */
function redactUrl(url: string): string {
  return url.replace(/\/\/[^@/]*@/g, "//***@");
}
