// The full stack's bucket store: one NATS JetStream key-value entry per
// bucket, changed only by compare-and-set on its revision, so takes from any
// number of gateway replicas serialise on the server and never hand out a
// token twice. Idle buckets expire with the KV's max age (an absent bucket
// reads as full, which is what an hour of silence refills it to anyway).
import { connect, Events, type KV, type NatsConnection } from "nats";
import { takeFrom, type BucketPolicy, type BucketState, type BucketStore, type TakeResult } from "./port.js";

export interface NatsKvBucketStoreOptions {
  url: string;
  /** KV bucket name; separate names let several stacks share one server. */
  bucket?: string;
  /** Bucket entries untouched for this long disappear. Must exceed burst / perSecond of every policy. */
  idleTtlMs?: number;
  now?: () => number;
  /** How long one KV operation may take. */
  timeoutMs?: number;
  /** Compare-and-set attempts under contention before giving up. */
  maxAttempts?: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const enc = new TextEncoder();
const dec = new TextDecoder();

/** JetStream's "wrong last sequence": someone else wrote the key since we read it. */
function isCasConflict(e: unknown): boolean {
  const err = e as { api_error?: { err_code?: number }; message?: string };
  return err?.api_error?.err_code === 10071 || /wrong last sequence/i.test(String(err?.message));
}

function parse(bytes: Uint8Array): BucketState | null {
  try {
    const v = JSON.parse(dec.decode(bytes)) as BucketState;
    return Number.isFinite(v.tokens) && Number.isFinite(v.at) ? v : null;
  } catch {
    return null;
  }
}

export async function createNatsKvBucketStore(opts: NatsKvBucketStoreOptions): Promise<BucketStore> {
  const now = opts.now ?? Date.now;
  const maxAttempts = opts.maxAttempts ?? 50;
  let nc: NatsConnection;
  try {
    nc = await connect({ servers: opts.url, name: "article-audio:ratelimit", maxReconnectAttempts: -1, reconnectTimeWait: 1000 });
  } catch (err) {
    throw new Error(`cannot connect to NATS for rate limits: ${(err as Error).message}`);
  }
  let kv: KV;
  try {
    // A short timeout: while NATS is away, the limiter admits (fail open) instead of holding requests.
    kv = await nc.jetstream().views.kv(opts.bucket ?? "ratelimit", { history: 1, ttl: opts.idleTtlMs ?? 3_600_000, timeout: opts.timeoutMs ?? 2_000 });
  } catch (err) {
    await nc.close();
    throw new Error(`cannot open the NATS KV bucket for rate limits: ${(err as Error).message}`);
  }

  // Known to be disconnected: fail at once (the limiter admits) rather than wait for a timeout.
  let connected = true;
  void (async () => {
    for await (const st of nc.status()) {
      if (st.type === Events.Disconnect) connected = false;
      else if (st.type === Events.Reconnect) connected = true;
    }
  })().catch(() => undefined);

  const timeoutMs = opts.timeoutMs ?? 2_000;
  /** nats.js does not apply the KV timeout to every call while disconnected; this bounds the whole take. */
  function bounded<T>(p: Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const limit = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`rate-limit KV did not answer within ${timeoutMs} ms`)), timeoutMs);
    });
    return Promise.race([p, limit]).finally(() => clearTimeout(timer));
  }

  async function take(key: string, want: number, policy: BucketPolicy): Promise<TakeResult> {
    for (let attempt = 1; ; attempt++) {
      const entry = await kv.get(key);
      const live = entry && entry.operation === "PUT" ? entry : null;
      const { next, result } = takeFrom(live ? parse(live.value) : null, want, policy, now());
      // Nothing granted changes nothing: the level is a function of (tokens, at).
      if (result.granted === 0) return result;
      try {
        const value = enc.encode(JSON.stringify(next));
        if (live) await kv.update(key, value, live.revision);
        else if (entry) await kv.update(key, value, entry.revision);
        else await kv.create(key, value);
        return result;
      } catch (e) {
        if (!isCasConflict(e) || attempt >= maxAttempts) throw e;
        // Jitter so the replicas that collided do not collide again in lock-step.
        await sleep(Math.random() * Math.min(20, 2 * attempt));
      }
    }
  }

  return {
    take: (key, want, policy) => (connected ? bounded(take(key, want, policy)) : Promise.reject(new Error("NATS is disconnected"))),
    async close() {
      await nc.drain().catch(() => nc.close());
    },
  };
}
