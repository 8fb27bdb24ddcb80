// Listening events are analytics sent by beacons that never read the answer,
// so the gateway answers at once and forwards them in batches: every
// `flushMs`, one RecordListening call per player key (at most 50 events each).
// A beacon then costs about what a coalesced read does. A full buffer drops
// the newest events, counted.
//
// Keys: the first beacon of a key this gateway has not seen goes upstream at
// once, and its answer says whether the key exists. Known keys are buffered;
// keys found unknown (at first sight, or at a flush after a rotation) are
// remembered for a while, so their beacons are refused without any upstream
// call or key lookup. Both memories are bounded (least recently used first).
import { Code, ConnectError, type Client } from "@connectrpc/connect";
import type { ListenerService, ListeningEvent } from "../gen/articles/v1/listener_pb.js";
import { createExpiringLru } from "../lib/expiring-lru.js";
import type { Logger } from "../lib/log.js";

type Event = Omit<ListeningEvent, "$typeName">;

export interface ListeningBuffer {
  /**
   * Takes a beacon's events: "unknown-key" when the key does not exist (the
   * events are dropped). Throws the upstream error when a key seen for the
   * first time could not be checked.
   */
  add(key: string, events: Event[]): Promise<"taken" | "unknown-key">;
  /** Known not to exist, without asking anyone. */
  isUnknown(key: string): boolean;
  /** Sends what is buffered now (shutdown, tests). */
  flush(): Promise<void>;
  close(): Promise<void>;
}

export interface ListeningBufferOptions {
  flushMs?: number;
  maxPerKey?: number;
  /** Keys remembered as existing / as unknown: how many, and for how long. */
  knownKeys?: { max: number; ttlMs: number };
  unknownKeys?: { max: number; ttlMs: number };
}

const PER_CALL = 50;

const isUnknownKey = (err: unknown) => ConnectError.from(err).code === Code.Unauthenticated;

export function createListeningBuffer(listener: Client<typeof ListenerService>, log: Logger, opts: ListeningBufferOptions = {}): ListeningBuffer {
  const maxPerKey = opts.maxPerKey ?? 2_000;
  const known = createExpiringLru<true>(opts.knownKeys ?? { max: 10_000, ttlMs: 10 * 60_000 });
  // A stale embed (a rotated key) can keep sending for days; random keys fill it, and go first.
  const unknown = createExpiringLru<true>(opts.unknownKeys ?? { max: 10_000, ttlMs: 5 * 60_000 });
  const checking = new Map<string, Promise<boolean>>();
  let pending = new Map<string, Event[]>();
  let dropped = 0;
  let sending: Promise<void> = Promise.resolve();

  const call = (key: string, events: Event[]) => listener.recordListening({ events }, { headers: { authorization: `Bearer ${key}` } });

  function forget(key: string): void {
    known.delete(key);
    unknown.set(key, true);
  }

  async function send(batch: Map<string, Event[]>): Promise<void> {
    for (const [key, events] of batch) {
      for (let i = 0; i < events.length; i += PER_CALL) {
        try {
          await call(key, events.slice(i, i + PER_CALL));
        } catch (err) {
          // A key rotated since it was first seen: its next beacons are refused here.
          if (isUnknownKey(err)) forget(key);
          log.debug({ err: (err as Error).message, events: events.length - i }, "listening events not recorded");
          break;
        }
      }
    }
  }

  /** First sight of a key: its events go at once, and the answer tells whether it exists. */
  async function check(key: string, events: Event[]): Promise<boolean> {
    try {
      await call(key, events);
      known.set(key, true);
      return true;
    } catch (err) {
      if (!isUnknownKey(err)) throw err;
      forget(key);
      return false;
    }
  }

  function queue(key: string, events: Event[]): void {
    let list = pending.get(key);
    if (!list) pending.set(key, (list = []));
    const room = maxPerKey - list.length;
    if (room < events.length) dropped += events.length - Math.max(room, 0);
    for (const e of events.slice(0, Math.max(room, 0))) list.push(e);
  }

  const flush = () => {
    if (dropped) {
      log.warn({ dropped }, "listening events dropped: a player key's buffer was full");
      dropped = 0;
    }
    if (pending.size === 0) return sending;
    const batch = pending;
    pending = new Map();
    return (sending = sending.then(() => send(batch)));
  };
  const timer = setInterval(() => void flush(), opts.flushMs ?? 250);
  timer.unref();

  return {
    async add(key, events) {
      if (unknown.get(key)) return "unknown-key";
      if (known.get(key)) {
        queue(key, events);
        return "taken";
      }
      const inFlight = checking.get(key);
      if (inFlight) {
        // Beacons that arrive while the key is being checked wait for that one answer.
        if (!(await inFlight)) return "unknown-key";
        queue(key, events);
        return "taken";
      }
      const checked = check(key, events).finally(() => checking.delete(key));
      checking.set(key, checked);
      return (await checked) ? "taken" : "unknown-key";
    },
    isUnknown: (key) => unknown.get(key) !== undefined,
    flush,
    async close() {
      clearInterval(timer);
      await flush();
    },
  };
}
