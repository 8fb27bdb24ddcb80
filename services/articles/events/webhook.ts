// Signed webhook delivery to publishers. Delivery is fire-and-forget for the
// caller: a slow or broken receiver must never fail or delay an article
// status change, so everything here is logged, retried a bounded number of
// times, and then dropped. Each project has its own few delivery slots and
// its own queue, served in turn, so one project's slow or dead receiver only
// ever delays that project's own deliveries. The scheme is documented in
// docs/webhooks.md, the isolation in docs/limits.md.
import { createHmac, randomUUID, timingSafeEqual } from "node:crypto";
import { FairRing } from "../../../lib/bus/fair-ring.js";
import type { Logger } from "../../../lib/log.js";
import { FetchLimitError, safeFetch, UnsafeUrlError, type SafeFetchOptions } from "../../../lib/net/safe-fetch.js";

export const SIGNATURE_HEADER = "X-Webhook-Signature";
export const ID_HEADER = "X-Webhook-Id";
/** Receivers should refuse signatures older (or newer) than this. */
export const DEFAULT_TOLERANCE_SECONDS = 300;

/** Hex HMAC-SHA256 of `${timestamp}.${body}`, keyed with the project's webhook secret. */
export function signWebhook(secret: string, timestamp: number, body: string): string {
  return createHmac("sha256", secret).update(`${timestamp}.${body}`).digest("hex");
}

export function signatureHeader(secret: string, timestamp: number, body: string): string {
  return `t=${timestamp},v1=${signWebhook(secret, timestamp, body)}`;
}

/**
 * Receiver-side check, used by our tests and offered to publishers as the
 * reference: the header must carry a v1 signature of exactly this body with
 * a timestamp within the tolerance.
 */
export function verifyWebhook(
  secret: string,
  header: string | undefined,
  body: string,
  opts: { toleranceSeconds?: number; now?: number } = {},
): boolean {
  if (!header) return false;
  const parts = header.split(",").map((p) => p.trim().split("="));
  const t = Number(parts.find(([k]) => k === "t")?.[1]);
  if (!Number.isInteger(t)) return false;
  const now = opts.now ?? Math.floor(Date.now() / 1000);
  if (Math.abs(now - t) > (opts.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS)) return false;
  const expected = Buffer.from(signWebhook(secret, t, body), "hex");
  return parts.some(([k, v]) => {
    if (k !== "v1" || !v || !/^[0-9a-f]{64}$/i.test(v)) return false;
    return timingSafeEqual(Buffer.from(v, "hex"), expected);
  });
}

export interface DeliveryResult {
  id: string;
  /** Origin and path only: query strings may carry receiver tokens. */
  target: string;
  ok: boolean;
  attempts: number;
  status?: number;
  error?: string;
}

export interface WebhookDispatcherOptions {
  log: Logger;
  fetchOptions?: SafeFetchOptions;
  /** Retries after the first attempt; default 5. */
  retries?: number;
  /** Wait before retry n is backoffMs[min(n, last)]; default 1 s, 5 s, 30 s, 2 min, 10 min. */
  backoffMs?: number[];
  /** Deliveries running at once across all projects; further ones queue. Default 64. */
  concurrency?: number;
  /** Deliveries of one project running at once: what a slow receiver can hold. Default 2. */
  perProjectConcurrency?: number;
  /** Deliveries allowed to wait for a slot; beyond that new ones are dropped and logged. Default 10 000. */
  maxQueued?: number;
  /** Deliveries of one project allowed to wait; a dead receiver's backlog stops there. Default 1 000. */
  maxQueuedPerProject?: number;
  /** How long close() waits for requests already on the wire; default 2 s. */
  closeGraceMs?: number;
  /** Called once per delivery with its final outcome. */
  onResult?: (result: DeliveryResult) => void;
}

export interface WebhookDispatcher {
  /** `project` keys the slots and queue; without it the receiver's origin does. */
  deliver(url: string, secret: string, event: object, project?: string): void;
  close(): Promise<void>;
}

const DEFAULT_BACKOFF_MS = [1_000, 5_000, 30_000, 120_000, 600_000];

export function createWebhookDispatcher(opts: WebhookDispatcherOptions): WebhookDispatcher {
  const { log } = opts;
  const retries = opts.retries ?? 5;
  const backoff = opts.backoffMs?.length ? opts.backoffMs : DEFAULT_BACKOFF_MS;
  const concurrency = opts.concurrency ?? 64;
  const perProject = opts.perProjectConcurrency ?? 2;
  const maxQueued = opts.maxQueued ?? 10_000;
  const maxQueuedPerProject = opts.maxQueuedPerProject ?? 1_000;
  const closeGraceMs = opts.closeGraceMs ?? 2_000;
  // Redirects would turn a POST into a GET or move it to another host; a
  // webhook URL must point at its receiver directly.
  const fetchOptions: SafeFetchOptions = { timeoutMs: 10_000, maxBytes: 64 * 1024, maxRedirects: 0, ...opts.fetchOptions };

  let closed = false;
  let active = 0;
  let queued = 0;
  /** Per project: deliveries on the wire and attempts waiting for a slot. */
  const lanes = new Map<string, { active: number; waiting: Array<() => void> }>();
  const turns = new FairRing();
  const timers = new Set<NodeJS.Timeout>();
  const inFlight = new Set<Promise<void>>();
  const abort = new AbortController();

  const report = (r: DeliveryResult) => {
    try {
      opts.onResult?.(r);
    } catch (err) {
      log.error({ err, webhookId: r.id }, "webhook result callback failed");
    }
  };

  const laneOf = (key: string) => {
    let lane = lanes.get(key);
    if (!lane) lanes.set(key, (lane = { active: 0, waiting: [] }));
    return lane;
  };

  /** Starts waiting attempts while slots are free, one project at a time in turn. */
  const pump = () => {
    while (active < concurrency && queued > 0) {
      let started = false;
      for (const key of turns.candidates()) {
        const lane = lanes.get(key);
        if (!lane || lane.waiting.length === 0) {
          turns.idle(key);
          continue;
        }
        if (lane.active >= perProject) continue;
        queued--;
        turns.served(key);
        lane.waiting.shift()!();
        started = true;
        break;
      }
      if (!started) return;
    }
  };

  const runSlot = (key: string, fn: () => Promise<void>) => {
    const lane = laneOf(key);
    const start = () => {
      active++;
      lane.active++;
      const p = fn()
        .catch((err) => log.error({ err }, "webhook attempt failed unexpectedly"))
        .finally(() => {
          active--;
          lane.active--;
          if (lane.active === 0 && lane.waiting.length === 0 && lanes.get(key) === lane) lanes.delete(key);
          inFlight.delete(p);
          pump();
        });
      inFlight.add(p);
    };
    lane.waiting.push(start);
    queued++;
    turns.activate(key);
    pump();
  };

  function attempt(d: { id: string; key: string; url: string; target: string; secret: string; body: string }, n: number): void {
    runSlot(d.key, async () => {
      if (closed) return;
      const timestamp = Math.floor(Date.now() / 1000);
      let status: number | undefined;
      let error: string | undefined;
      let retryable = false;
      let retryAfterMs: number | undefined;
      try {
        const res = await safeFetch(d.url, {
          ...fetchOptions,
          method: "POST",
          headers: {
            ...fetchOptions.headers,
            "content-type": "application/json",
            [ID_HEADER]: d.id,
            [SIGNATURE_HEADER]: signatureHeader(d.secret, timestamp, d.body),
          },
          body: d.body,
          signal: abort.signal,
        });
        status = res.status;
        if (status >= 200 && status < 300) {
          log.info({ webhookId: d.id, target: d.target, status, attempt: n + 1 }, "webhook delivered");
          return report({ id: d.id, target: d.target, ok: true, attempts: n + 1, status });
        }
        retryable = status >= 500 || status === 429 || status === 408;
        retryAfterMs = retryAfter(res.headers.get("retry-after"));
        error = `receiver answered ${status}`;
      } catch (err) {
        if (closed) error = "dispatcher closed";
        else if (err instanceof UnsafeUrlError) error = err.message;
        else if (err instanceof FetchLimitError) {
          error = err.message;
          retryable = err.code === "timeout" || err.code === "dns";
        } else {
          error = (err as Error).message ?? String(err);
          retryable = true;
        }
      }
      if (retryable && n < retries && !closed) {
        const wait = Math.max(backoff[Math.min(n, backoff.length - 1)], Math.min(retryAfterMs ?? 0, backoff[backoff.length - 1]));
        log.warn({ webhookId: d.id, target: d.target, status, error, attempt: n + 1, retryInMs: wait }, "webhook attempt failed, will retry");
        const timer = setTimeout(() => {
          timers.delete(timer);
          attempt(d, n + 1);
        }, wait);
        timers.add(timer);
        return;
      }
      log.error({ webhookId: d.id, target: d.target, status, error, attempts: n + 1 }, "webhook delivery gave up");
      report({ id: d.id, target: d.target, ok: false, attempts: n + 1, status, error });
    });
  }

  return {
    deliver(url, secret, event, project) {
      const id = randomUUID();
      try {
        const target = describe(url);
        if (closed) {
          log.warn({ webhookId: id, target }, "webhook dropped: dispatcher closed");
          return report({ id, target, ok: false, attempts: 0, error: "dispatcher closed" });
        }
        const key = project ?? `origin:${target.replace(/^(\w+:\/\/[^/]*).*$/, "$1")}`;
        if (queued >= maxQueued || (lanes.get(key)?.waiting.length ?? 0) >= maxQueuedPerProject) {
          log.error({ webhookId: id, target, project }, "webhook dropped: delivery queue full");
          return report({ id, target, ok: false, attempts: 0, error: "queue full" });
        }
        if (!secret) throw new Error("webhook secret is empty");
        const body = JSON.stringify(event);
        if (body === undefined) throw new Error("event is not serialisable");
        attempt({ id, key, url, target, secret, body }, 0);
      } catch (err) {
        const error = (err as Error).message;
        log.error({ webhookId: id, error }, "webhook not sent");
        report({ id, target: describe(url), ok: false, attempts: 0, error });
      }
    },

    async close() {
      if (closed) return;
      closed = true;
      for (const t of timers) clearTimeout(t);
      if (timers.size) log.warn({ pending: timers.size }, "webhook retries abandoned at shutdown");
      timers.clear();
      for (const lane of lanes.values()) lane.waiting.length = 0;
      queued = 0;
      turns.clear();
      const grace = new Promise<void>((r) => setTimeout(r, closeGraceMs).unref());
      await Promise.race([Promise.allSettled([...inFlight]), grace]);
      abort.abort(new Error("dispatcher closed"));
      await Promise.allSettled([...inFlight]);
    },
  };
}

function describe(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return "(invalid URL)";
  }
}

function retryAfter(value: string | null): number | undefined {
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}
