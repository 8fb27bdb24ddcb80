import { expect } from "chai";
import { createHmac } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { Writable } from "node:stream";
import { pino } from "pino";
import {
  createWebhookDispatcher,
  signWebhook,
  verifyWebhook,
  type DeliveryResult,
  type WebhookDispatcherOptions,
} from "../../services/articles/events/webhook.js";

const SECRET = "whsec_7f3a9c0d4b2e";

interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
  at: number;
}

async function receiver(answer: (n: number) => number) {
  const received: Received[] = [];
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      received.push({ headers: req.headers, body, at: Date.now() });
      res.statusCode = answer(received.length);
      res.end();
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/hooks/audio?token=abc`,
    received,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

function captureLog() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, cb) {
      lines.push(chunk.toString());
      cb();
    },
  });
  return { log: pino({ level: "debug" }, stream), lines };
}

/** Independent receiver-side check, written from the documented scheme rather than with our helper. */
function receiverAccepts(r: Received, secret: string, nowSec: number, toleranceSec = 300): boolean {
  const header = String(r.headers["x-webhook-signature"] ?? "");
  const m = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header);
  if (!m) return false;
  if (Math.abs(nowSec - Number(m[1])) > toleranceSec) return false;
  const expected = createHmac("sha256", secret).update(`${m[1]}.${r.body}`).digest("hex");
  return expected === m[2];
}

describe("webhooks", () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  function dispatcher(extra: Partial<WebhookDispatcherOptions> = {}) {
    const { log, lines } = captureLog();
    const results: DeliveryResult[] = [];
    let notify: () => void = () => {};
    const d = createWebhookDispatcher({
      log,
      fetchOptions: { allowPrivate: (host) => host === "127.0.0.1", timeoutMs: 2000 },
      backoffMs: [20, 40],
      onResult: (r) => {
        results.push(r);
        notify();
      },
      ...extra,
    });
    cleanups.push(() => d.close());
    const nextResult = () => new Promise<DeliveryResult>((resolve) => (notify = () => resolve(results[results.length - 1])));
    return { d, lines, results, nextResult };
  }

  it("signs hex HMAC-SHA256 over timestamp, dot and body", () => {
    const expected = createHmac("sha256", "k").update('1700000000.{"a":1}').digest("hex");
    expect(signWebhook("k", 1700000000, '{"a":1}')).to.equal(expected);
    expect(signWebhook("k", 1700000001, '{"a":1}')).not.to.equal(expected);
    expect(signWebhook("other", 1700000000, '{"a":1}')).not.to.equal(expected);
  });

  it("verifyWebhook accepts a fresh signature and refuses stale, tampered or foreign ones", () => {
    const body = '{"event":"article.status","status":"ready"}';
    const now = 1_700_000_000;
    const header = `t=${now},v1=${signWebhook(SECRET, now, body)}`;
    expect(verifyWebhook(SECRET, header, body, { now: now + 10 })).to.equal(true);
    expect(verifyWebhook(SECRET, header, body, { now: now + 301 })).to.equal(false);
    expect(verifyWebhook(SECRET, header, body, { now: now - 301 })).to.equal(false);
    expect(verifyWebhook(SECRET, header, body.replace("ready", "errored"), { now })).to.equal(false);
    expect(verifyWebhook("wrong", header, body, { now })).to.equal(false);
    expect(verifyWebhook(SECRET, header.replace(`t=${now}`, `t=${now + 1}`), body, { now })).to.equal(false);
    expect(verifyWebhook(SECRET, undefined, body, { now })).to.equal(false);
    expect(verifyWebhook(SECRET, "garbage", body, { now })).to.equal(false);
  });

  it("POSTs the event as signed JSON that an independent receiver verifies", async () => {
    const rx = await receiver(() => 204);
    cleanups.push(rx.close);
    const { d, nextResult, lines } = dispatcher();
    const event = { type: "article.status", project: "p1", articleId: "a1", status: "ready", revision: 3 };
    const done = nextResult();
    d.deliver(rx.url, SECRET, event);
    const result = await done;
    expect(result).to.include({ ok: true, attempts: 1, status: 204 });
    expect(rx.received).to.have.length(1);
    const r = rx.received[0];
    expect(r.headers["content-type"]).to.equal("application/json");
    expect(JSON.parse(r.body)).to.deep.equal(event);
    expect(r.headers["x-webhook-id"]).to.equal(result.id);
    expect(receiverAccepts(r, SECRET, Math.floor(Date.now() / 1000))).to.equal(true);
    expect(receiverAccepts(r, "another-secret", Math.floor(Date.now() / 1000))).to.equal(false);
    // The timestamp is part of what is signed: replaying it ten minutes later fails.
    expect(receiverAccepts(r, SECRET, Math.floor(Date.now() / 1000) + 600)).to.equal(false);
    expect(lines.join("")).not.to.include(SECRET);
    expect(lines.join("")).not.to.include("token=abc");
  });

  it("retries after a 500 with backoff, re-signing each attempt under the same id", async () => {
    const rx = await receiver((n) => (n === 1 ? 500 : n === 2 ? 429 : 200));
    cleanups.push(rx.close);
    const { d, nextResult } = dispatcher({ backoffMs: [50, 100] });
    const done = nextResult();
    d.deliver(rx.url, SECRET, { status: "ready" });
    const result = await done;
    expect(result).to.include({ ok: true, attempts: 3, status: 200 });
    expect(rx.received).to.have.length(3);
    expect(new Set(rx.received.map((r) => r.headers["x-webhook-id"])).size).to.equal(1);
    for (const r of rx.received) expect(receiverAccepts(r, SECRET, Math.floor(Date.now() / 1000))).to.equal(true);
    expect(rx.received[1].at - rx.received[0].at).to.be.at.least(45);
    expect(rx.received[2].at - rx.received[1].at).to.be.at.least(95);
  });

  it("gives up after the retry bound and logs it without the secret", async () => {
    const rx = await receiver(() => 503);
    cleanups.push(rx.close);
    const { d, nextResult, lines } = dispatcher({ retries: 2, backoffMs: [10] });
    const done = nextResult();
    d.deliver(rx.url, SECRET, { status: "errored" });
    const result = await done;
    expect(result).to.include({ ok: false, attempts: 3, status: 503 });
    await new Promise((r) => setTimeout(r, 100));
    expect(rx.received).to.have.length(3);
    const log = lines.join("");
    expect(log).to.include("gave up");
    expect(log).not.to.include(SECRET);
  });

  it("does not retry a 4xx other than 408/429", async () => {
    const rx = await receiver(() => 410);
    cleanups.push(rx.close);
    const { d, nextResult } = dispatcher();
    const done = nextResult();
    d.deliver(rx.url, SECRET, { status: "ready" });
    expect(await done).to.include({ ok: false, attempts: 1, status: 410 });
    expect(rx.received).to.have.length(1);
  });

  it("refuses a private target when not allowed, without contacting it or throwing", async () => {
    const rx = await receiver(() => 200);
    cleanups.push(rx.close);
    const { d, nextResult, lines } = dispatcher({ fetchOptions: {} });
    const done = nextResult();
    expect(() => d.deliver(rx.url, SECRET, { status: "ready" })).not.to.throw();
    const result = await done;
    expect(result.ok).to.equal(false);
    expect(result.attempts).to.equal(1);
    expect(result.error).to.match(/loopback/);
    expect(rx.received).to.have.length(0);
    expect(lines.join("")).not.to.include(SECRET);
  });

  it("never throws to the caller, whatever it passes", async () => {
    const { d, results } = dispatcher();
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    expect(() => d.deliver("not a url", SECRET, {})).not.to.throw();
    expect(() => d.deliver("http://127.0.0.1:1/", SECRET, circular)).not.to.throw();
    expect(() => d.deliver("http://127.0.0.1:1/", "", {})).not.to.throw();
    await new Promise((r) => setTimeout(r, 50));
    expect(results.filter((r) => !r.ok).length).to.be.at.least(3);
  });

  it("isolates projects: a receiver that answers in 9.5 s does not delay another project's delivery", async () => {
    const SLOW_MS = 9_500;
    let slowOnWire = 0;
    let slowPeak = 0;
    const slowArrived: number[] = [];
    const slow = http.createServer((req, res) => {
      slowOnWire++;
      slowPeak = Math.max(slowPeak, slowOnWire);
      slowArrived.push(Date.now());
      req.resume();
      const t = setTimeout(() => {
        slowOnWire--;
        res.end();
      }, SLOW_MS);
      res.on("close", () => clearTimeout(t));
    });
    await new Promise<void>((r) => slow.listen(0, "127.0.0.1", r));
    cleanups.push(() => new Promise<void>((r) => (slow.closeAllConnections(), slow.close(() => r()))));
    const fast = await receiver(() => 204);
    cleanups.push(fast.close);
    const { d } = dispatcher({ fetchOptions: { allowPrivate: (host) => host === "127.0.0.1", timeoutMs: 12_000 }, closeGraceMs: 50 });

    // The slow project has far more deliveries than the old shared pool had slots (8).
    for (let i = 0; i < 30; i++) d.deliver(`http://127.0.0.1:${(slow.address() as AddressInfo).port}/hook`, SECRET, { n: i }, "slow-project");
    await new Promise((r) => setTimeout(r, 200));
    const sent = Date.now();
    d.deliver(fast.url, SECRET, { n: "fast" }, "fast-project");
    await new Promise<void>((resolve, reject) => {
      const until = sent + SLOW_MS;
      const poll = setInterval(() => {
        if (fast.received.length > 0 || Date.now() > until) {
          clearInterval(poll);
          if (fast.received.length > 0) resolve();
          else reject(new Error("the other project's webhook waited as long as a slow receiver's call"));
        }
      }, 5);
    });
    const delay = fast.received[0].at - sent;
    // eslint-disable-next-line no-console
    console.log(`      [webhook isolation] other project's delivery arrived ${delay} ms after the event, with 30 deliveries to a 9.5 s receiver queued`);
    // Measured in milliseconds. Asserted: it did not wait behind a slow receiver's call.
    expect(delay).to.be.below(SLOW_MS);
    // The slow project holds only its own slots.
    expect(slowPeak).to.equal(2);
    expect(slowArrived).to.have.length(2);
  });

  it("bounds one project's queue without refusing other projects", async () => {
    const hang = http.createServer(() => undefined);
    await new Promise<void>((r) => hang.listen(0, "127.0.0.1", r));
    cleanups.push(() => new Promise<void>((r) => (hang.closeAllConnections(), hang.close(() => r()))));
    const ok = await receiver(() => 200);
    cleanups.push(ok.close);
    const { d, results } = dispatcher({ maxQueuedPerProject: 5, closeGraceMs: 50 });
    const dead = `http://127.0.0.1:${(hang.address() as AddressInfo).port}/`;
    for (let i = 0; i < 10; i++) d.deliver(dead, SECRET, { i }, "dead");
    // 2 on the wire, 5 waiting, 3 dropped at once.
    expect(results.filter((r) => r.error === "queue full")).to.have.length(3);
    d.deliver(ok.url, SECRET, { i: "ok" }, "alive");
    await new Promise((r) => setTimeout(r, 300));
    expect(ok.received).to.have.length(1);
  });

  it("close() waits briefly for a delivery on the wire and drops pending retries", async () => {
    let release: () => void = () => {};
    const received: string[] = [];
    const server = http.createServer((req, res) => {
      received.push(req.url!);
      if (req.url === "/slow") {
        release = () => res.end();
        setTimeout(() => release(), 150);
      } else {
        res.statusCode = 500;
        res.end();
      }
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    cleanups.push(() => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))));
    const port = (server.address() as AddressInfo).port;
    // A grace and a retry far longer than the delivery on the wire (150 ms): close() ends with that
    // delivery, neither at the grace's end nor the retry's.
    const LONG_MS = 20_000;
    const { d, results } = dispatcher({ backoffMs: [LONG_MS], closeGraceMs: LONG_MS });
    d.deliver(`http://127.0.0.1:${port}/slow`, SECRET, { n: 1 });
    d.deliver(`http://127.0.0.1:${port}/fails`, SECRET, { n: 2 });
    await new Promise((r) => setTimeout(r, 50));
    const t0 = Date.now();
    await d.close();
    expect(Date.now() - t0).to.be.below(LONG_MS / 2);
    expect(results.find((r) => r.target.endsWith("/slow"))).to.include({ ok: true });
    expect(received.filter((u) => u === "/fails")).to.have.length(1);
    d.deliver(`http://127.0.0.1:${port}/slow`, SECRET, { n: 3 });
    expect(results[results.length - 1]).to.include({ ok: false, error: "dispatcher closed" });
  });
});
