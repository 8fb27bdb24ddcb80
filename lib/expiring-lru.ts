// A bounded map whose entries also expire: at most `max` entries, the least
// recently used one leaving first, and none older than `ttlMs`. For caches of
// answers that may go stale and whose keys a client chooses (so the map must
// never grow with what a client sends). The order of use is kept by
// lib/sized-fifo.ts (each entry of size 1, moved to the newest end when used),
// so letting the least recently used go never walks the map.
import { SizedFifo } from "./sized-fifo.js";

export interface ExpiringLru<V> {
  get(key: string): V | undefined;
  set(key: string, value: V): void;
  delete(key: string): void;
  readonly size: number;
}

export function createExpiringLru<V>(opts: { max: number; ttlMs: number; now?: () => number }): ExpiringLru<V> {
  const now = opts.now ?? Date.now;
  const entries = new SizedFifo<{ value: V; expires: number }>(opts.max);
  return {
    get(key) {
      const e = entries.get(key);
      if (!e) return undefined;
      if (e.expires <= now()) {
        entries.delete(key);
        return undefined;
      }
      // Set again: the newest end of the order is the most recently used.
      entries.set(key, e, 1);
      return e.value;
    },
    set(key, value) {
      entries.set(key, { value, expires: now() + opts.ttlMs }, 1);
    },
    delete(key) {
      entries.delete(key);
    },
    get size() {
      return entries.size;
    },
  };
}
