// Rate limits count the route a request reaches, however the request spells
// its path: the router matches any case and an optional trailing slash, so
// every such spelling must draw from the project's one bucket. Spellings the
// router does not route at all (doubled slashes, percent-encoded letters of
// the path) must not be served either. On the embedded default and on the
// full stack (NATS KV buckets).
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect } from "chai";
import { startEmbedded, type Embedded } from "../../launch/embedded.js";
import { api, type ApiResponse } from "../support/http.js";
import { requireMongo, requireNats } from "../support/servers.js";
import { startTestStack, TOKENS, type TestStack } from "./stack-harness.js";
import { sink } from "../support/sink.js";

const READS_BURST = 6;
const WRITES_BURST = 4;
// A refill far slower than the test, so the counts are exact.
const LIMITS = {
  RATE_LIMIT_READS_PER_SECOND: "0.01",
  RATE_LIMIT_READS_BURST: String(READS_BURST),
  RATE_LIMIT_WRITES_PER_SECOND: "0.01",
  RATE_LIMIT_WRITES_BURST: String(WRITES_BURST),
};

type Call = ReturnType<typeof api>;
type Req = [method: string, path: string, body?: unknown];

const note = { title: "Spelling", text: "Short." };
// Every one reaches a limited route; a few also percent-encode a parameter.
const WRITES: Req[] = [
  ["POST", "/API/articles", note],
  ["POST", "/api/articles/", note],
  ["DELETE", "/API/ARTICLES/no-such-rl"],
  ["PUT", "/Api/Articles_External_Id/no%2Dsuch-rl", { title: "x" }],
  ["POST", "/Api/ArTiClEs/", note],
];
const READS: Req[] = [
  ["GET", "/API/articles"],
  ["GET", "/api/articles/"],
  ["GET", "/Api/ArTiClEs"],
  ["GET", "/API/ARTICLES/%6Eo-such-rl"],
  ["HEAD", "/API/ARTICLES/"],
  ["GET", "/api/STATS/"],
  ["GET", "/API/Player"],
];
// Not routed by the router: answered 404, never served.
const UNROUTED: Req[] = [
  ["GET", "//api//articles"],
  ["GET", "/api//articles"],
  ["GET", "/api/%61rticles"],
  ["GET", "/%61pi/articles"],
  ["GET", "/api/articles//"],
  ["POST", "//api//articles", note],
  ["POST", "/api//articles", note],
  ["POST", "/api/%61rticles", note],
  ["POST", "/api/articles//", note],
];
// The docs and the OpenAPI document stay exempt however spelled.
const EXEMPT = ["/API/DOCS", "/api/docs/", "/API/OPENAPI.JSON", "/Api/OpenApi.json/", "/API/docs/init.js"];

const cycle = (reqs: Req[], n: number) => Array.from({ length: n }, (_, i) => reqs[i % reqs.length]);
const show = (reqs: Req[], rs: ApiResponse[]) => rs.map((r, i) => `${reqs[i][0]} ${reqs[i][1]} → ${r.status}`).join("\n");

/** Sequential, so the first `burst` are admitted and the rest refused, whatever their spelling. */
async function drain(call: Call, reqs: Req[], burst: number, cls: string): Promise<void> {
  const sent = cycle(reqs, burst + 2 * reqs.length);
  const rs: ApiResponse[] = [];
  for (const [m, p, b] of sent) rs.push(await call(m, p, b));
  const statuses = rs.map((r) => r.status);
  expect(statuses.slice(0, burst).every((s) => s !== 429), show(sent, rs)).to.equal(true);
  expect(statuses.slice(burst).every((s) => s === 429), show(sent, rs)).to.equal(true);
  for (const r of rs.slice(0, burst)) expect(r.headers.get("ratelimit"), show(sent, rs)).to.match(new RegExp(`^"${cls}";r=\\d+;t=\\d+$`));
  // Every spelling was refused once the bucket was empty.
  const refused = new Set(sent.slice(burst).map(([m, p]) => `${m} ${p}`));
  expect(refused.size).to.equal(reqs.length);
  console.log(`      ${cls}: ${burst} of ${sent.length} admitted over ${reqs.length} spellings`);
}

function scenario(target: () => { url: string; token: string }) {
  it("keeps the docs and the OpenAPI document exempt however spelled", async () => {
    const call = api(target().url, target().token);
    for (const p of EXEMPT) {
      for (let i = 0; i < READS_BURST + 2; i++) {
        const r = await call("GET", p);
        expect(r.status, p).to.equal(200);
        expect(r.headers.get("ratelimit"), p).to.equal(null);
      }
    }
  });

  it("serves none of the spellings the router does not route, and counts nothing for them", async () => {
    const call = api(target().url, target().token);
    for (const [m, p, b] of UNROUTED) {
      const r = await call(m, p, b);
      expect(r.status, `${m} ${p}`).to.equal(404);
      expect(r.body.message, `${m} ${p}`).to.match(/^No such endpoint/);
      expect(r.headers.get("ratelimit"), `${m} ${p}`).to.equal(null);
    }
  });

  it("counts writes to every spelling of a limited route in the project's one bucket", async () => {
    await drain(api(target().url, target().token), WRITES, WRITES_BURST, "writes");
  });

  it("counts reads of every spelling of a limited route in the project's one bucket", async () => {
    const call = api(target().url, target().token);
    // Nothing before used the read bucket; the first read also shows that only the two admitted creates of the writes test made articles.
    const first = await call("GET", "/API/Articles?limit=100");
    expect(first.headers.get("ratelimit")).to.match(new RegExp(`^"reads";r=${READS_BURST - 1};`));
    expect(first.body.count).to.equal(2);
    await drain(call, READS, READS_BURST - 1, "reads");
  });
}

describe("rate limits count every spelling of a route (embedded default)", function () {
  this.timeout(120_000);
  let dir: string;
  let sys: Embedded;
  const token = "rl-spelling-full-0123456789";

  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "rl-spelling-"));
    sys = await startEmbedded(
      {
        PORT: "0",
        HOST: "127.0.0.1",
        DATA_DIR: dir,
        SEED_TOKENS: JSON.stringify([{ token, project: "spelling", scope: "full" }]),
        AUDIO_ENGINE: process.env.AUDIO_ENGINE,
        ...LIMITS,
      },
      sink(),
    );
  });
  after(async () => {
    await sys?.close();
    await rm(dir, { recursive: true, force: true });
  });

  scenario(() => ({ url: sys.url, token }));
});

describe("rate limits count every spelling of a route (full stack, NATS KV buckets)", function () {
  this.timeout(180_000);
  let t: TestStack;

  before(async function () {
    const mongoUrl = await requireMongo(this);
    const natsUrl = await requireNats(this);
    t = await startTestStack({ mongoUrl, natsUrl, env: LIMITS });
  });
  afterEach(function () {
    if (this.currentTest?.state === "failed" && t) console.log(`--- last stack output ---\n${t.logs.tail()}`);
  });
  after(async () => {
    await t?.cleanup();
  });

  scenario(() => ({ url: t.stack.url, token: TOKENS.aFull }));
});
