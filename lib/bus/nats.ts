// NATS JetStream job bus (full stack). Jobs go to a work-queue stream with
// file storage, one subject per project (<subject>.<project>), and each
// project has its own durable pull consumer with explicit acks, shared by all
// workers. Each worker asks the projects for one job at a time in round-robin
// order (lib/bus/fair-ring.ts), so a project's backlog cannot starve another
// project (docs/limits.md, "Fair scheduling"). JetStream does the bookkeeping
// that survives crashes: deduplication by message id, ack-wait leases,
// delivery counts and the delivery limit.
import { createHash } from "node:crypto";
import {
  AckPolicy,
  DeliverPolicy,
  ErrorCode,
  Events,
  JSONCodec,
  RetentionPolicy,
  StorageType,
  connect,
  nanos,
  type JetStreamClient,
  type JetStreamManager,
  type JsMsg,
  type NatsConnection,
  type NatsError,
  type Subscription,
} from "nats";
import type { Logger } from "../log.js";
import { FairRing } from "./fair-ring.js";
import { jsPublisher } from "./js-publisher.js";
import {
  HandBackError,
  PermanentJobError,
  jobMessageId,
  laneRank,
  type AudioJob,
  type ConsumeOptions,
  type JobBus,
  type JobHandler,
  type JobSubscription,
} from "./port.js";

/** Bound on one JetStream API request (stream info, pulls, consumer management). */
const API_TIMEOUT_MS = 2_000;
/** How long status events are held to share a socket write (see sendEvents). */
const EVENT_FLUSH_MS = 5;
/** Pause after a failed pull before the consumer loop asks again. */
const FETCH_RETRY_MS = 250;

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
/** How often a worker re-reads which projects have jobs before it takes the next (redeliveries, missed or late doorbells). */
export const REFRESH_MS = 1000;
/** Per-project consumers nobody pulled from for this long are removed by the server. */
const LANE_INACTIVE_MS = 60 * 60_000;
const SAFE_TOKEN = /^[A-Za-z0-9_-]{1,64}$/;
/**
 * Priority jobs (someone waits for them: audio on demand) go to a second subject of their
 * project, `<lane>.first`, with a consumer of its own that is asked first on the project's
 * turn: ahead of the project's backlog, never ahead of another project's turn.
 */
const FIRST = ".first";
/** Full renders of priority jobs (`stage: "full"`): after the project's previews, before its backlog. */
const NEXT = ".next";
/** The lane (project subject) a job subject belongs to. */
const laneOf = (subj: string) => (subj.endsWith(FIRST) ? subj.slice(0, -FIRST.length) : subj.endsWith(NEXT) ? subj.slice(0, -NEXT.length) : subj);
/** The subject a job goes to in its lane (port.ts laneRank). */
const subjectIn = (lane: string, job: AudioJob) => [`${lane}${FIRST}`, `${lane}${NEXT}`, lane][laneRank(job)];

/** A project's subject token and consumer-name suffix; ids outside the auth service's pattern are hashed. */
export function laneToken(projectId: string): string {
  return SAFE_TOKEN.test(projectId) ? projectId : `h_${createHash("sha256").update(projectId).digest("hex").slice(0, 32)}`;
}

/** What a subscription needs to find lanes and pull from them. */
interface Lanes {
  js: JetStreamClient;
  jsm: JetStreamManager;
  nc: NatsConnection;
  stream: string;
  /** Jobs of project p are published to `${subject}.${laneToken(p)}`; `subject` itself is the lane of jobs queued before per-project subjects. */
  subject: string;
  /** Consumer (durable name) of a lane subject or its priority subject, or undefined for a subject that is neither. */
  consumerOf(laneSubject: string): string | undefined;
  /** Creates or updates the lane's consumer once per bus (again after forget). */
  ensure(laneSubject: string, opts: ConsumeOptions): Promise<void>;
  forget(laneSubject: string): void;
}

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

  // JetStream API calls made while the server restarts are never answered; a short
  // timeout lets the consumer loop ask again soon after the reconnect instead of
  // waiting out the client's 5 s default (publishes keep their own timeout).
  const jsm = await nc.jetstreamManager({ timeout: API_TIMEOUT_MS });
  await ensureStream(jsm, stream, subject, o.duplicateWindowMs ?? 120_000);
  const js = nc.jetstream({ timeout: API_TIMEOUT_MS });
  const publisher = jsPublisher(nc);

  const ensured = new Map<string, Promise<void>>();
  const consumerOf = (laneSubject: string): string | undefined => {
    if (laneSubject === subject) return durable;
    if (!laneSubject.startsWith(`${subject}.`)) return undefined;
    const lane = laneOf(laneSubject);
    const token = lane.slice(subject.length + 1);
    const suffix = lane === laneSubject ? "" : laneSubject.endsWith(NEXT) ? "_next" : "_first";
    return SAFE_TOKEN.test(token) || /^h_[0-9a-f]{32}$/.test(token) ? `${durable}_${token}${suffix}` : undefined;
  };
  // Jobs published in one turn of the event loop leave at its end, in one socket write
  // (the client writes once per microtask checkpoint). Status events wait a little
  // longer, EVENT_FLUSH_MS: nobody waits on them (webhooks and internal consumers are
  // asynchronous anyway), and under load the events of a create, its claim and its
  // result each come in a turn of their own, so a few milliseconds gather those of many
  // articles into one write instead of one each.
  const events: Array<[string, Uint8Array]> = [];
  const jobsWaiting: Array<() => void> = [];
  let eventsDue: NodeJS.Timeout | undefined;
  const endOfTurn = () => {
    for (const go of jobsWaiting.splice(0)) go();
  };
  const sendEvents = () => {
    eventsDue = undefined;
    if (nc.isClosed()) return void events.splice(0);
    for (const [subj, data] of events.splice(0)) nc.publish(subj, data);
  };
  const lanes: Lanes = {
    js,
    jsm,
    nc,
    stream,
    subject,
    consumerOf,
    ensure(laneSubject, opts) {
      let p = ensured.get(laneSubject);
      if (!p) {
        p = ensureConsumer(jsm, stream, laneSubject, consumerOf(laneSubject)!, opts);
        ensured.set(laneSubject, p);
        p.catch(() => ensured.delete(laneSubject));
      }
      return p;
    },
    forget(laneSubject) {
      ensured.delete(laneSubject);
    },
  };

  return {
    async publish(job) {
      if (nc.isClosed()) throw new Error("job bus is closed");
      // While reconnecting the client would buffer and the publish time out
      // later; fail now so the caller leaves the job to the reconciler.
      if (!connected) throw new Error("NATS is unreachable: job not published");
      const msgID = jobMessageId(job);
      await new Promise<void>((go) => {
        if (jobsWaiting.length === 0) setImmediate(endOfTurn);
        jobsWaiting.push(go);
      });
      try {
        const lane = `${subject}.${laneToken(job.projectId)}`;
        const ack = await publisher.publish(subjectIn(lane, job), codec.encode(job), msgID, publishTimeoutMs);
        if (ack.duplicate) log.debug({ msgID }, "duplicate job dropped by the stream");
      } catch (err) {
        throw new Error(`NATS publish of ${msgID} failed: ${(err as Error).message}`);
      }
    },

    async consume(handler, opts) {
      if (!(opts.concurrency >= 1) || !(opts.maxAttempts >= 1) || !(opts.ackWaitMs > 0)) {
        throw new Error("consume: concurrency and maxAttempts must be >= 1 and ackWaitMs > 0");
      }
      const sub = new NatsSubscription(lanes, handler, opts, log);
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
      // Held for EVENT_FLUSH_MS (see sendEvents): the events of every request answered
      // meanwhile leave in one socket write instead of one each.
      eventsDue ??= setTimeout(sendEvents, EVENT_FLUSH_MS);
      events.push([subj, codec.encode(data)]);
    },

    async backlog() {
      // Work-queue retention: the stream holds exactly the jobs not yet acknowledged.
      const info = await jsm.streams.info(stream);
      let unacked = 0;
      for await (const c of jsm.consumers.list(stream)) unacked += c.num_ack_pending;
      return { pending: Math.max(0, info.state.messages - unacked), unacked };
    },

    async close() {
      endOfTurn();
      publisher.close();
      clearTimeout(eventsDue);
      sendEvents();
      await Promise.all([...subscriptions].map((s) => s.stop()));
      subscriptions.clear();
      if (!nc.isClosed()) await nc.close();
    },
  };
}

async function ensureStream(jsm: JetStreamManager, name: string, subject: string, dupMs: number): Promise<void> {
  const config = {
    name,
    // The bare subject stays so jobs queued by an older version still drain.
    subjects: [subject, `${subject}.*`, `${subject}.*${FIRST}`, `${subject}.*${NEXT}`],
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
    // One consumer per project: the server removes those of projects gone quiet.
    inactive_threshold: nanos(LANE_INACTIVE_MS),
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
 * Takes one job at a time, only while a handler slot is free (so no job sits
 * in a client buffer while its lease runs out), from the projects in turn.
 * A project is in the rotation once a publish to its subject was seen (the
 * doorbell, a plain subscription on the job subjects) or the stream holds
 * messages for it; it leaves when a pull finds nothing to deliver.
 */
class NatsSubscription {
  /** Each running handler and a promise that resolves once its lease lapsed. */
  private inHand = new Map<Promise<void>, Promise<void>>();
  private slotFreed: (() => void) | undefined;
  private woken: (() => void) | undefined;
  private turns = new FairRing();
  /** Lanes whose priority subject may hold jobs: asked first on their turn until found empty. */
  private urgent = new Set<string>();
  /** Lanes whose full-render subject may hold jobs: asked next, likewise. */
  private following = new Set<string>();
  private doorbell: Subscription | undefined;
  private lastRefresh = 0;
  private stopping = false;
  private loop: Promise<void> | undefined;

  constructor(
    private lanes: Lanes,
    private handler: JobHandler,
    private opts: ConsumeOptions,
    private log: Logger,
  ) {}

  start(): void {
    this.doorbell = this.lanes.nc.subscribe(`${this.lanes.subject}.>`, {
      callback: (_err, m) => {
        if (this.lanes.consumerOf(m.subject) === undefined) return;
        this.ring(m.subject);
        this.wake();
      },
    });
    this.loop = this.run().catch((err) => this.log.error({ err }, "job consumer loop stopped"));
  }

  /** A job subject may have work: its lane joins the rotation (and is marked urgent for a priority subject). */
  private ring(subj: string): void {
    const lane = laneOf(subj);
    if (subj.endsWith(NEXT)) this.following.add(lane);
    else if (lane !== subj) this.urgent.add(lane);
    this.turns.activate(lane);
  }

  private wake(): void {
    const w = this.woken;
    this.woken = undefined;
    w?.();
  }

  private async run(): Promise<void> {
    while (!this.stopping) {
      const free = this.opts.concurrency - this.inHand.size;
      if (free <= 0) {
        await new Promise<void>((r) => (this.slotFreed = r));
        continue;
      }
      try {
        if (Date.now() - this.lastRefresh >= REFRESH_MS) await this.refresh();
        const m = await this.next();
        if (m) {
          this.handle(m);
          continue;
        }
      } catch (err) {
        if (this.stopping) break;
        this.log.warn({ err: (err as Error).message }, "job fetch failed, retrying");
        await new Promise((r) => setTimeout(r, FETCH_RETRY_MS));
        continue;
      }
      // Nothing to deliver: sleep until a publish rings or the next refresh is due.
      const wait = Math.max(10, REFRESH_MS - (Date.now() - this.lastRefresh));
      await new Promise<void>((r) => {
        const t = setTimeout(r, wait);
        this.woken = () => {
          clearTimeout(t);
          r();
        };
      });
      this.woken = undefined;
    }
  }

  /** Brings every project that has messages in the stream (due or not) into the rotation. */
  private async refresh(): Promise<void> {
    this.lastRefresh = Date.now();
    const info = await this.lanes.jsm.streams.info(this.lanes.stream, { subjects_filter: ">" });
    for (const [subj, count] of Object.entries(info.state.subjects ?? {})) {
      if (count > 0 && this.lanes.consumerOf(subj) !== undefined) this.ring(subj);
    }
  }

  /** One job from the first project in turn that has one ready. */
  private async next(): Promise<JsMsg | undefined> {
    for (const lane of this.turns.candidates()) {
      if (this.stopping) return undefined;
      let m: JsMsg | undefined;
      if (this.urgent.has(lane)) {
        m = await this.pull(`${lane}${FIRST}`);
        if (!m) this.urgent.delete(lane);
      }
      if (!m && this.following.has(lane)) {
        m = await this.pull(`${lane}${NEXT}`);
        if (!m) this.following.delete(lane);
      }
      m ??= await this.pull(lane);
      if (!m) {
        this.turns.idle(lane);
        continue;
      }
      this.turns.served(lane);
      if (this.stopping) {
        // Pulled as drain began: hand it straight back to the others.
        m.nak();
        return undefined;
      }
      return m;
    }
    return undefined;
  }

  /** Asks the lane's consumer for one message without waiting (no_wait pull). */
  private async pull(lane: string, again = true): Promise<JsMsg | undefined> {
    await this.lanes.ensure(lane, this.opts);
    try {
      return await this.lanes.js.pull(this.lanes.stream, this.lanes.consumerOf(lane)!);
    } catch (err) {
      const code = (err as NatsError).code;
      // Nothing ready, or the consumer is at its ack-pending limit.
      if (code === ErrorCode.JetStream404NoMessages || code === ErrorCode.JetStream408RequestTimeout || code === ErrorCode.JetStream409) return undefined;
      if (code === ErrorCode.NoResponders && again) {
        // The consumer is gone (removed after inactivity, or by an operator): make it again.
        this.lanes.forget(lane);
        return this.pull(lane, false);
      }
      throw err;
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
      // Its project may have left the rotation meanwhile; look again when the retry is due.
      const due = setTimeout(() => {
        this.ring(m.subject);
        this.wake();
      }, delay + 5);
      due.unref();
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
      await this.lanes.js.publish(m.subject, codec.encode({ ...job, attemptsUsed: used }), { msgID: `${jobMessageId(job)}:handback:${m.seq}` });
      m.ack();
      log.info({ attemptsUsed: used }, "job handed back without using up an attempt");
    } catch (err) {
      // Better a counted redelivery than none.
      log.warn({ err: (err as Error).message }, "hand-back publish failed; job redelivered as a normal retry");
      m.nak();
    }
  }

  /** After a reconnect: re-read the stream at once rather than at the next refresh. */
  repull(): void {
    this.lastRefresh = 0;
    this.wake();
  }

  async drain(): Promise<void> {
    await this.stop();
    await Promise.all([...this.inHand].map(([done, lapsed]) => Promise.race([done, lapsed])));
  }

  /** Like drain but does not wait for handlers (bus close). */
  async stop(): Promise<void> {
    this.stopping = true;
    this.slotFreed?.();
    this.wake();
    this.doorbell?.unsubscribe();
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
    ...(o.priority === true ? { priority: true } : {}),
    ...(o.stage === "full" ? { stage: "full" as const } : {}),
  };
}

/** Credentials in a NATS URL must not reach an error message. */
function redactUrl(url: string): string {
  return url.replace(/\/\/[^@/]*@/g, "//***@");
}
