// A bounded map whose entries also expire: at most `max` entries, the least
// recently used one leaving first, and none older than `ttlMs`. For caches of
// answers that may go stale and whose keys a client chooses (so the map must
// never grow with what a client sends).

export interface ExpiringLru<V> {
  get(key: string): V | undefined;
  set(key: string, value: V): void;
  delete(key: string): void;
  readonly size: number;
}

export function createExpiringLru<V>(opts: { max: number; ttlMs: number; now?: () => number }): ExpiringLru<V> {
  const now = opts.now ?? Date.now;
  const entries = new Map<string, { value: V; expires: number }>();
  return {
    get(key) {
      const e = entries.get(key);
      if (!e) return undefined;
      entries.delete(key);
      if (e.expires <= now()) return undefined;
      // Re-inserting keeps the map ordered by last use.
      entries.set(key, e);
      return e.value;
    },
    set(key, value) {
      entries.delete(key);
      entries.set(key, { value, expires: now() + opts.ttlMs });
      while (entries.size > opts.max) entries.delete(entries.keys().next().value as string);
    },
    delete(key) {
      entries.delete(key);
    },
    get size() {
      return entries.size;
    },
  };
}
