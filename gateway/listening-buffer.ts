// Listening events are analytics sent by beacons that never read the answer,
// so the gateway answers at once and forwards them in batches: every
// `flushMs`, one RecordListening call per player key (at most 50 events each).
// A beacon then costs about what a coalesced read does. An unknown key's
// events are dropped at the flush; a full buffer drops the newest, counted.
import type { Client } from "@connectrpc/connect";
import type { ListenerService, ListeningEvent } from "../gen/articles/v1/listener_pb.js";
import type { Logger } from "../lib/log.js";

export interface ListeningBuffer {
  add(key: string, events: Omit<ListeningEvent, "$typeName">[]): void;
  /** Sends what is buffered now (shutdown, tests). */
  flush(): Promise<void>;
  close(): Promise<void>;
}

const PER_CALL = 50;

export function createListeningBuffer(listener: Client<typeof ListenerService>, log: Logger, opts: { flushMs?: number; maxPerKey?: number } = {}): ListeningBuffer {
  const maxPerKey = opts.maxPerKey ?? 2_000;
  let pending = new Map<string, Omit<ListeningEvent, "$typeName">[]>();
  let dropped = 0;
  let sending: Promise<void> = Promise.resolve();

  async function send(batch: Map<string, Omit<ListeningEvent, "$typeName">[]>): Promise<void> {
    for (const [key, events] of batch) {
      for (let i = 0; i < events.length; i += PER_CALL) {
        try {
          await listener.recordListening({ events: events.slice(i, i + PER_CALL) }, { headers: { authorization: `Bearer ${key}` } });
        } catch (err) {
          log.debug({ err: (err as Error).message, events: events.length - i }, "listening events not recorded");
          break;
        }
      }
    }
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
    add(key, events) {
      let list = pending.get(key);
      if (!list) pending.set(key, (list = []));
      const room = maxPerKey - list.length;
      if (room < events.length) dropped += events.length - Math.max(room, 0);
      for (const e of events.slice(0, Math.max(room, 0))) list.push(e);
    },
    flush,
    async close() {
      clearInterval(timer);
      await flush();
    },
  };
}
