// Listening-event beacons as players send them, from a chosen source address:
// every 127.x.y.z address is this machine's loopback on Linux, so one test
// process can be many clients to the gateway (which limits per address).
import http from "node:http";

const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });

/** Posts one beacon (text/plain, like navigator.sendBeacon) from `from`; answers the status. */
export async function beacon(base: string, body: unknown, from = "127.0.0.1"): Promise<number> {
  return (await beaconFrom(base, body, from)).status;
}

export interface Answer {
  status: number;
  retryAfter: number | undefined;
  body: any;
}

/** Posts one beacon from `from`: the status, `Retry-After` and the JSON body, if any. */
export function beaconFrom(base: string, body: unknown, from = "127.0.0.1"): Promise<Answer> {
  return requestFrom(from, new URL("/player/v1/events", base).href, { method: "POST", headers: { "content-type": "text/plain" } }, JSON.stringify(body));
}

/** A GET from `from` (a player's lookup, an embed page): the status, `Retry-After` and the JSON body, if any. */
export function getFrom(from: string, url: string): Promise<Answer> {
  return requestFrom(from, url, {});
}

function requestFrom(from: string, url: string, options: http.RequestOptions, body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { ...options, agent, localAddress: from }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => (text += c));
      res.on("end", () => {
        let json: unknown;
        try {
          json = text ? JSON.parse(text) : undefined;
        } catch {
          json = text;
        }
        const retry = res.headers["retry-after"];
        resolve({ status: res.statusCode ?? 0, retryAfter: retry === undefined ? undefined : Number(retry), body: json });
      });
    });
    req.on("error", reject);
    req.end(body);
  });
}

/**
 * Sends `send(i)` with `concurrency` requests in flight until one is answered 429 (then lets those
 * in flight finish) or `max` were sent. However fast this machine answers, the sender outruns a
 * bucket's refill, so the refusal comes; `elapsedSeconds` spans every answer, so a bucket of burst
 * b refilled at r/s can have admitted at most b + r × elapsedSeconds of them.
 */
export async function untilRefused(send: (i: number) => Promise<Answer>, o: { concurrency: number; max: number }): Promise<{ answers: Answer[]; elapsedSeconds: number }> {
  const start = performance.now();
  const answers: Answer[] = [];
  let next = 0;
  let refused = false;
  await Promise.all(
    Array.from({ length: o.concurrency }, async () => {
      while (!refused && next < o.max) {
        const a = await send(next++);
        answers.push(a);
        if (a.status === 429) refused = true;
      }
    }),
  );
  return { answers, elapsedSeconds: (performance.now() - start) / 1000 };
}

export interface Sent {
  statuses: Map<number, number>;
  /** Beacons answered 204. */
  taken: number;
  sent: number;
  elapsedSeconds: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Sends `count` beacons at `perSecond` (without waiting for answers), each from `from(i)` with body `body(i)`. */
export async function paced(base: string, o: { perSecond: number; count: number; from: (i: number) => string; body: (i: number) => unknown }): Promise<Sent> {
  const start = Date.now();
  const answers: Promise<number>[] = [];
  for (let i = 0; i < o.count; i++) {
    const due = start + (i * 1000) / o.perSecond;
    if (due > Date.now()) await sleep(due - Date.now());
    answers.push(beacon(base, o.body(i), o.from(i)).catch(() => 0));
  }
  const all = await Promise.all(answers);
  const statuses = new Map<number, number>();
  for (const s of all) statuses.set(s, (statuses.get(s) ?? 0) + 1);
  return { statuses, taken: statuses.get(204) ?? 0, sent: all.length, elapsedSeconds: (Date.now() - start) / 1000 };
}

/** Sends `count` beacons as fast as `concurrency` requests in flight allow. */
export async function burst(base: string, o: { count: number; concurrency: number; from: (i: number) => string; body: (i: number) => unknown }): Promise<Sent> {
  const start = Date.now();
  const statuses = new Map<number, number>();
  let next = 0;
  await Promise.all(
    Array.from({ length: o.concurrency }, async () => {
      for (let i = next++; i < o.count; i = next++) {
        const s = await beacon(base, o.body(i), o.from(i)).catch(() => 0);
        statuses.set(s, (statuses.get(s) ?? 0) + 1);
      }
    }),
  );
  return { statuses, taken: statuses.get(204) ?? 0, sent: o.count, elapsedSeconds: (Date.now() - start) / 1000 };
}

export const show = (s: Sent) => `${s.sent} beacons in ${s.elapsedSeconds.toFixed(1)} s: ${[...s.statuses].map(([k, v]) => `${v}× ${k}`).join(", ")}`;
