// In-process job bus: the embedded mode's queue and the fast test double.
// It keeps JetStream's delivery semantics (dedup window, leases, redelivery
// with backoff, attempt limit, round-robin across projects) so code that
// passes against it behaves the same on NATS. Jobs live in memory only: a restart loses them and the
// articles reconciler re-publishes whatever is still waiting.
import { FairRing } from "./fair-ring.js";
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

export interface MemoryBusOptions {
  /** A second publish of the same jobMessageId within this is dropped. */
  duplicateWindowMs?: number;
}

export type EventListener = (subject: string, data: unknown) => void;

export interface MemoryBus extends JobBus {
  /** NATS-style pattern: "*" matches one token, ">" the rest. Returns an unsubscribe. */
  subscribeEvents(pattern: string, fn: EventListener): () => void;
}

interface Message {
  id: string;
  job: AudioJob;
  deliveries: number;
  exhausted: boolean;
}

interface Lease {
  msg: Message;
  consumer: Consumer;
  timer: NodeJS.Timeout;
  /** Settled by ack/nak/term or taken back on expiry; later outcomes are ignored. */
  done: boolean;
  finished: Promise<void>;
  release(): void;
}

interface Consumer {
  handler: JobHandler;
  opts: ConsumeOptions;
  leases: Set<Lease>;
  /** Handlers still running, including ones whose lease expired. */
  running: number;
  stopped: boolean;
}

export function createMemoryBus(options: MemoryBusOptions = {}): MemoryBus {
  const windowMs = options.duplicateWindowMs ?? 120_000;
  const seen = new Map<string, number>();
  // One FIFO per project, served in turn so one project's backlog cannot starve another's.
  const lanes = new Map<string, Message[]>();
  const turns = new FairRing();
  let readyCount = 0;
  const delayed = new Set<NodeJS.Timeout>();
  const consumers: Consumer[] = [];
  const listeners = new Set<{ pattern: string[]; fn: EventListener }>();
  let nextConsumer = 0;
  let closed = false;

  function isDuplicate(id: string): boolean {
    const now = Date.now();
    for (const [k, at] of seen) {
      if (now - at < windowMs) break; // insertion order = time order
      seen.delete(k);
    }
    if (seen.has(id)) return true;
    seen.set(id, now);
    return false;
  }

  function pickConsumer(): Consumer | undefined {
    for (let i = 0; i < consumers.length; i++) {
      const c = consumers[(nextConsumer + i) % consumers.length];
      if (!c.stopped && c.running < c.opts.concurrency) {
        nextConsumer = (nextConsumer + i + 1) % consumers.length;
        return c;
      }
    }
    return undefined;
  }

  function enqueue(msg: Message): void {
    const lane = msg.job.projectId;
    let q = lanes.get(lane);
    if (!q) lanes.set(lane, (q = []));
    // Behind the jobs of its own rank or a better one, ahead of the rest (port.ts laneRank).
    const rank = laneRank(msg.job);
    if (rank === 2) q.push(msg);
    else {
      const at = q.findIndex((m) => laneRank(m.job) > rank);
      q.splice(at < 0 ? q.length : at, 0, msg);
    }
    readyCount += 1;
    turns.activate(lane);
  }

  function takeNext(): Message | undefined {
    for (const lane of turns.candidates()) {
      const msg = lanes.get(lane)?.shift();
      if (!msg) {
        // Found empty on its turn, not when its last job left: jobs it gets
        // meanwhile wait for its turn instead of counting as a first job.
        lanes.delete(lane);
        turns.idle(lane);
        continue;
      }
      readyCount -= 1;
      turns.served(lane);
      return msg;
    }
    return undefined;
  }

  function pump(): void {
    while (!closed && readyCount > 0) {
      const c = pickConsumer();
      if (!c) return;
      const msg = takeNext();
      if (!msg) return;
      deliver(c, msg);
    }
  }

  function requeue(msg: Message, delayMs: number): void {
    if (closed) return;
    if (delayMs <= 0) {
      enqueue(msg);
      queueMicrotask(pump);
      return;
    }
    const t = setTimeout(() => {
      delayed.delete(t);
      enqueue(msg);
      pump();
    }, delayMs);
    delayed.add(t);
  }

  async function exhaust(c: Consumer, msg: Message, error: unknown): Promise<void> {
    if (msg.exhausted) return;
    msg.exhausted = true;
    try {
      await c.opts.onExhausted(msg.job, error, msg.deliveries);
    } catch {
      // The job is dropped either way; the reconciler is the safety net.
    }
  }

  function deliver(c: Consumer, msg: Message): void {
    msg.deliveries += 1;
    const attempt = msg.deliveries;
    let resolveFinished!: () => void;
    const lease: Lease = {
      msg,
      consumer: c,
      done: false,
      finished: new Promise((r) => (resolveFinished = r)),
      timer: undefined as unknown as NodeJS.Timeout,
      release: () => {
        lease.done = true;
        clearTimeout(lease.timer);
        c.leases.delete(lease);
        resolveFinished();
      },
    };
    const release = lease.release;
    const arm = () => {
      clearTimeout(lease.timer);
      lease.timer = setTimeout(() => {
        if (lease.done) return;
        // Neither finished nor kept alive: treat the holder as crashed.
        release();
        if (attempt >= c.opts.maxAttempts) void exhaust(c, msg, new Error(`no acknowledgement within ${c.opts.ackWaitMs} ms`));
        else requeue(msg, 0);
      }, c.opts.ackWaitMs);
    };
    c.leases.add(lease);
    c.running += 1;
    arm();

    const settle = async (error: unknown | undefined) => {
      if (lease.done) return;
      if (error === undefined) return release();
      if (error instanceof PermanentJobError) return release();
      if (error instanceof HandBackError) {
        msg.deliveries -= 1;
        release();
        return requeue(msg, 0);
      }
      if (attempt >= c.opts.maxAttempts) {
        // Still "in hand" for drain() until onExhausted has run.
        await exhaust(c, msg, error);
        return release();
      }
      release();
      const b = c.opts.backoffMs;
      requeue(msg, b.length ? b[Math.min(attempt - 1, b.length - 1)] : 0);
    };

    const delivery = {
      job: { ...msg.job },
      attempt,
      working: () => {
        if (!lease.done) arm();
      },
    };
    Promise.resolve()
      .then(() => c.handler(delivery))
      .then(
        () => settle(undefined),
        (err: unknown) => settle(err ?? new Error("handler rejected")),
      )
      .finally(() => {
        c.running -= 1;
        pump();
      });
  }

  return {
    async publish(job) {
      if (closed) throw new Error("job bus is closed");
      const id = jobMessageId(job);
      if (isDuplicate(id)) return;
      enqueue({ id, job: { ...job }, deliveries: 0, exhausted: false });
      queueMicrotask(pump);
    },

    async consume(handler, opts): Promise<JobSubscription> {
      if (closed) throw new Error("job bus is closed");
      if (!(opts.concurrency >= 1) || !(opts.maxAttempts >= 1) || !(opts.ackWaitMs > 0)) {
        throw new Error("consume: concurrency and maxAttempts must be >= 1 and ackWaitMs > 0");
      }
      const c: Consumer = { handler, opts, leases: new Set(), running: 0, stopped: false };
      consumers.push(c);
      queueMicrotask(pump);
      return {
        async drain() {
          c.stopped = true;
          const i = consumers.indexOf(c);
          if (i >= 0) consumers.splice(i, 1);
          // Jobs whose lease already expired count as abandoned, not in hand.
          await Promise.all([...c.leases].map((l) => l.finished));
        },
      };
    },

    async publishEvent(subject, data) {
      const tokens = subject.split(".");
      for (const l of listeners) {
        if (!matches(l.pattern, tokens)) continue;
        try {
          l.fn(subject, data);
        } catch {
          // A listener's failure must not reach the publisher.
        }
      }
    },

    async backlog() {
      let unacked = 0;
      for (const c of consumers) unacked += c.leases.size;
      return { pending: readyCount + delayed.size, unacked };
    },

    subscribeEvents(pattern, fn) {
      const entry = { pattern: pattern.split("."), fn };
      listeners.add(entry);
      return () => listeners.delete(entry);
    },

    async close() {
      closed = true;
      for (const t of delayed) clearTimeout(t);
      delayed.clear();
      for (const c of consumers) {
        c.stopped = true;
        for (const l of [...c.leases]) l.release();
      }
      consumers.length = 0;
      lanes.clear();
      turns.clear();
      readyCount = 0;
      listeners.clear();
    },
  };
}

function matches(pattern: string[], tokens: string[]): boolean {
  for (let i = 0; i < pattern.length; i++) {
    if (pattern[i] === ">") return tokens.length > i;
    if (i >= tokens.length) return false;
    if (pattern[i] !== "*" && pattern[i] !== tokens[i]) return false;
  }
  return pattern.length === tokens.length;
}
