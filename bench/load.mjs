// The load generator, always a separate process from the system under test.
// Reads its job from BENCH_LOAD (JSON), runs autocannon, prints one JSON line.
// Plain JavaScript on purpose: no loader in the generator's hot path.
import { readFileSync } from "node:fs";
import autocannon from "autocannon";

const job = JSON.parse(process.env.BENCH_LOAD ?? "{}");
const { url, connections, duration, kind, token, createBody, publicKey, lookupUrl } = job;
// Thousands of ids do not fit in one environment variable: they may come in a file (a JSON array).
const ids = job.idsFile ? JSON.parse(readFileSync(job.idsFile, "utf8")) : (job.ids ?? []);
const auth = { authorization: `Bearer ${token}` };
const json = { ...auth, "content-type": "application/json" };
const pick = () => ids[Math.floor(Math.random() * ids.length)];
const body = JSON.stringify(createBody ?? { title: "Bench article", text: "A short bench article." });

const get = (req) => ({ ...req, method: "GET", path: `/api/articles/${encodeURIComponent(pick())}`, headers: auth, body: undefined });
const segments = (req) => ({ ...get(req), path: `/api/articles/${encodeURIComponent(pick())}/segments` });
const post = (req) => ({ ...req, method: "POST", path: "/api/articles", headers: json, body });

// The listener side (bench/listener.ts): the player's lookup by page URL and its event beacon.
const lookup = `/player/v1/article?key=${publicKey}&url=${encodeURIComponent(lookupUrl ?? "")}`;
const beacon = JSON.stringify({ key: publicKey, events: [{ type: "impression", articleId: ids[0] }, { type: "play", articleId: ids[0], seconds: 4 }] });

const requests = {
  reference: [{ method: "GET", setupRequest: get }],
  getById: [{ method: "GET", setupRequest: get }],
  segments: [{ method: "GET", setupRequest: segments }],
  list: [{ method: "GET", path: "/api/articles?limit=100", headers: auth }],
  create: [{ method: "POST", setupRequest: post }],
  mix: [{ method: "GET", setupRequest: (req) => (Math.random() < 0.1 ? post(req) : get(req)) }],
  mix95: [{ method: "GET", setupRequest: (req) => (Math.random() < 0.05 ? post(req) : get(req)) }],
  listenerLookup: [{ method: "GET", path: lookup }],
  events: [{ method: "POST", path: "/player/v1/events", headers: { "content-type": "text/plain" }, body: beacon }],
}[kind];
if (!requests) throw new Error(`unknown load kind '${kind}'`);

const r = await autocannon({ url, connections, duration, requests, timeout: 10 });
const fiveXx = Object.entries(r.statusCodeStats ?? {})
  .filter(([code]) => code.startsWith("5"))
  .reduce((n, [, s]) => n + s.count, 0);
process.stdout.write(
  `${JSON.stringify({
    reqPerSec: r.requests.average,
    total: r.requests.total,
    p50: r.latency.p50,
    p99: r.latency.p99,
    errors: r.errors,
    timeouts: r.timeouts,
    non2xx: r.non2xx,
    fiveXx,
    statusCodes: Object.fromEntries(Object.entries(r.statusCodeStats ?? {}).map(([c, s]) => [c, s.count])),
  })}\n`,
);
