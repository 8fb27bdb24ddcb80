// Group commit: calls for the same key that arrive while one is on its way are
// sent together as the next batch. An idle key sends at once (no added
// latency); under load one round trip serves many callers, so the fixed cost
// of a call (RPC, database command) is paid per batch instead of per item.

export interface GroupCommitOptions {
  /** Most items in one batch; the rest wait for the next. Default 64. */
  maxBatch?: number;
  /**
   * An idle key's first item waits for the end of the event loop's turn, so the
   * items that the same turn produces (the creates of one CreateArticles call, the
   * requests parsed from one poll of the sockets) go as one batch instead of the
   * first alone and the rest after it. Costs one turn of latency. Default false.
   */
  gatherTurn?: boolean;
}

/**
 * `send` answers one result per item, in order. If it throws, every item of
 * that batch is rejected with the error; later batches still go.
 */
export function groupCommit<K, I, O>(send: (key: K, items: I[]) => Promise<O[]>, opts: GroupCommitOptions = {}): (key: K, item: I) => Promise<O> {
  const maxBatch = opts.maxBatch ?? 64;
  const gatherTurn = opts.gatherTurn ?? false;
  type Waiting = { item: I; resolve(o: O): void; reject(e: unknown): void };
  const queues = new Map<K, Waiting[]>();
  const busy = new Set<K>();

  async function drain(key: K): Promise<void> {
    busy.add(key);
    try {
      for (;;) {
        const queue = queues.get(key);
        if (!queue?.length) break;
        const batch = queue.splice(0, maxBatch);
        try {
          const results = await send(
            key,
            batch.map((w) => w.item),
          );
          if (results.length !== batch.length) throw new Error(`group commit: ${results.length} results for ${batch.length} items`);
          batch.forEach((w, i) => w.resolve(results[i]));
        } catch (e) {
          for (const w of batch) w.reject(e);
        }
      }
    } finally {
      queues.delete(key);
      busy.delete(key);
    }
  }

  return (key, item) =>
    new Promise<O>((resolve, reject) => {
      const queue = queues.get(key) ?? [];
      queue.push({ item, resolve, reject });
      queues.set(key, queue);
      if (busy.has(key)) return;
      if (!gatherTurn) return void drain(key);
      busy.add(key);
      setImmediate(() => void drain(key));
    });
}
