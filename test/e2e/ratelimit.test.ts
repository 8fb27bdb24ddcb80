// Per-project rate limits through the public API: on the embedded default
// (in-memory buckets) and across two gateways sharing NATS KV buckets.
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect } from "chai";
import { connect } from "nats";
import { AuthService } from "../../gen/auth/v1/auth_pb.js";
import { startGateway } from "../../gateway/app.js";
import { gatewayRateLimit, RATE_LIMIT_VARS } from "../../gateway/ratelimit-setup.js";
import { startEmbedded, type Embedded } from "../../launch/embedded.js";
import { createFsBlobStore } from "../../lib/blob/fs.js";
import { loadConfig } from "../../lib/config.js";
import { logger } from "../../lib/log.js";
import { rpcClient } from "../../lib/rpc/client.js";
import type { RunningService } from "../../lib/service.js";
import { api, type ApiResponse } from "../support/http.js";
import { requireNats } from "../support/servers.js";
import { sink } from "../support/sink.js";

const T = {
  a1: "rl-alpha-full-one-0123456789",
  a2: "rl-alpha-full-two-0123456789",
  aRead: "rl-alpha-read-0123456789",
  b: "rl-beta-full-0123456789",
  c: "rl-gamma-full-0123456789",
};
const SEED = JSON.stringify([
  { token: T.a1, project: "alpha", scope: "full" },
  { token: T.a2, project: "alpha", scope: "full" },
  { token: T.aRead, project: "alpha", scope: "read" },
  { token: T.b, project: "beta", scope: "full" },
  { token: T.c, project: "gamma", scope: "full" },
]);
const ADMIN = "rl-admin-token-0123456789";
const INTERNAL = "rl-internal-token-0123456789";
const article = (n: number) => ({ title: `Note ${n}`, text: "Short.", externalId: `rl-${n}-${randomBytes(3).toString("hex")}` });
const statuses = (rs: ApiResponse[]) => rs.map((r) => r.status);

describe("per-project rate limits (embedded default)", function () {
  this.timeout(120_000);
  let dir: string;
  let sys: Embedded;

  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "rl-e2e-"));
    sys = await startEmbedded(
      {
        PORT: "0",
        HOST: "127.0.0.1",
        DATA_DIR: dir,
        SEED_TOKENS: SEED,
        ADMIN_TOKEN: ADMIN,
        AUDIO_ENGINE: process.env.AUDIO_ENGINE,
        // A refill far slower than the test, so the counts below are exact.
        RATE_LIMIT_WRITES_PER_SECOND: "0.01",
        RATE_LIMIT_WRITES_BURST: "4",
        RATE_LIMIT_READS_PER_SECOND: "0.01",
        RATE_LIMIT_READS_BURST: "6",
      },
      sink(),
    );
  });
  after(async () => {
    await sys?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("a burst of creates gets 429 ErrorResults with Retry-After and RateLimit fields; two tokens of one project share the bucket", async () => {
    const A1 = api(sys.url, T.a1);
    const A2 = api(sys.url, T.a2);
    const rs = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? A1 : A2)("POST", "/api/articles", article(i))));
    expect(statuses(rs).filter((s) => s === 200), rs[0].text).to.have.length(4);
    const refused = rs.filter((r) => r.status === 429);
    expect(refused).to.have.length(6);
    for (const r of refused) {
      expect(r.body).to.deep.equal({ result: "fail", message: r.body.message });
      expect(r.body.message).to.match(/Too many writes.*0\.01\/s.*bursts of 4/);
      const wait = Number(r.headers.get("retry-after"));
      expect(wait).to.be.within(1, 100);
      expect(r.headers.get("ratelimit-policy")).to.equal('"writes";q=4;w=400');
      expect(r.headers.get("ratelimit")).to.match(/^"writes";r=0;t=\d+$/);
    }
    for (const r of rs.filter((x) => x.status === 200)) expect(r.headers.get("ratelimit")).to.match(/^"writes";r=[0-3];t=\d+$/);
    // The read-only token is the same project, but reads have their own bucket.
    expect((await api(sys.url, T.aRead)("GET", "/api/articles?limit=10&offset=0")).status).to.equal(200);
    expect((await A2("DELETE", "/api/articles/whatever-id")).status).to.equal(429);
  });

  it("another project is unaffected", async () => {
    const B = api(sys.url, T.b);
    const r = await B("POST", "/api/articles", article(100));
    expect(r.status, r.text).to.equal(200);
    expect(r.headers.get("ratelimit")).to.match(/^"writes";r=3;t=\d+$/);
  });

  it("reads have their own bucket, and the docs, bad tokens and audio files are not counted", async () => {
    const B = api(sys.url, T.b);
    const rs = [];
    for (let i = 0; i < 8; i++) rs.push(await B("GET", "/api/articles?limit=10&offset=0"));
    expect(statuses(rs)).to.deep.equal([200, 200, 200, 200, 200, 200, 429, 429]);
    expect(rs[0].headers.get("ratelimit-policy")).to.equal('"reads";q=6;w=600');
    expect(rs[5].headers.get("ratelimit")).to.match(/^"reads";r=0;t=\d+$/);
    for (let i = 0; i < 8; i++) expect((await B("GET", "/api/openapi.json")).status).to.equal(200);
    expect((await api(sys.url, "rl-nobody-0123456789")("GET", "/api/articles")).status).to.equal(401);
    expect((await api(sys.url)("GET", "/api/articles")).status).to.equal(401);
  });

  it("a project's own limits, set in its settings, apply instead of the defaults", async () => {
    const admin = rpcClient(AuthService, sys.services[0].url, { token: ADMIN });
    await admin.updateProjectSettings({ projectId: "gamma", patchJson: JSON.stringify({ rateLimit: { writes: { perSecond: 0.01, burst: 1 } } }) });
    const C = api(sys.url, T.c);
    const first = await C("POST", "/api/articles", article(200));
    expect(first.status, first.text).to.equal(200);
    expect(first.headers.get("ratelimit-policy")).to.equal('"writes";q=1;w=100');
    const second = await C("POST", "/api/articles", article(201));
    expect(second.status).to.equal(429);
    // Reads of the project keep the default.
    expect((await C("GET", "/api/articles?limit=10&offset=0")).headers.get("ratelimit-policy")).to.equal('"reads";q=6;w=600');
  });

  it("bad rate-limit settings are refused naming the field", async () => {
    const admin = rpcClient(AuthService, sys.services[0].url, { token: ADMIN });
    for (const [patch, field] of [
      [{ rateLimit: { writes: { perSecond: 0 } } }, /rateLimit\.writes\.perSecond/],
      [{ rateLimit: { reads: { burst: 1.5 } } }, /rateLimit\.reads\.burst/],
      [{ rateLimit: { deletes: {} } }, /rateLimit\.deletes: unknown setting/],
    ] as const) {
      const e = await admin.updateProjectSettings({ projectId: "beta", patchJson: JSON.stringify(patch) }).then(
        () => undefined,
        (err: Error) => err,
      );
      expect(e?.message).to.match(field);
    }
  });
});

describe("per-project rate limits across two gateways sharing NATS", function () {
  this.timeout(180_000);
  let dir: string;
  let sys: Embedded;
  let second: RunningService;
  let closeSecond: () => Promise<void>;
  let natsUrl: string;
  const run = randomBytes(3).toString("hex");
  const bucket = `rl_e2e_${run}`;

  before(async function () {
    natsUrl = await requireNats(this);
    dir = await mkdtemp(path.join(tmpdir(), "rl-e2e-nats-"));
    const env = {
      PORT: "0",
      HOST: "127.0.0.1",
      DATA_DIR: dir,
      SEED_TOKENS: SEED,
      INTERNAL_TOKEN: INTERNAL,
      NATS_URL: natsUrl,
      NATS_STREAM: `RL_${run}`,
      NATS_SUBJECT: `rl.${run}.jobs`,
      NATS_DURABLE: `rl_${run}`,
      RATE_LIMIT_KV_BUCKET: bucket,
      RATE_LIMIT_READS_PER_SECOND: "0.01",
      RATE_LIMIT_READS_BURST: "12",
      AUDIO_ENGINE: process.env.AUDIO_ENGINE,
    };
    sys = await startEmbedded(env, sink());
    // A second replica of the gateway: its own process state, the same services and the same NATS.
    const [auth, articles] = sys.services;
    const rl = await gatewayRateLimit(loadConfig({ ...RATE_LIMIT_VARS, NATS_URL: { type: "string", description: "" } }, env), { url: auth.url, internalToken: INTERNAL }, logger("gateway-2"));
    const blobs = createFsBlobStore(path.join(dir, "audio"));
    second = await startGateway({ articlesUrl: articles.url, healthTargets: [], blobs, log: logger("gateway-2"), rateLimit: rl!.options });
    closeSecond = async () => {
      await second.close();
      await rl!.close();
    };
  });
  after(async () => {
    await closeSecond?.();
    await sys?.close();
    await rm(dir, { recursive: true, force: true });
    if (natsUrl) {
      const nc = await connect({ servers: natsUrl });
      const jsm = await nc.jetstreamManager();
      for (const s of [`KV_${bucket}`, `RL_${run}`]) await jsm.streams.delete(s).catch(() => undefined);
      await nc.close();
    }
  });

  it("one project's reads are counted once across both gateways, whichever token and replica they use", async () => {
    const callers = [api(sys.url, T.a1), api(second.url, T.a2), api(second.url, T.aRead), api(sys.url, T.aRead)];
    const rs = await Promise.all(Array.from({ length: 40 }, (_, i) => callers[i % callers.length]("GET", "/api/articles?limit=10&offset=0")));
    const ok = statuses(rs).filter((s) => s === 200).length;
    // Exactly the burst: each gateway alone would have let 12 through (24 in all).
    expect(ok).to.equal(12);
    expect(rs.filter((r) => r.status === 429).every((r) => r.headers.get("retry-after") !== null)).to.equal(true);
    // Both replicas refuse now, and another project still reads on both.
    expect((await api(sys.url, T.a1)("GET", "/api/articles")).status).to.equal(429);
    expect((await api(second.url, T.a1)("GET", "/api/articles")).status).to.equal(429);
    expect((await api(sys.url, T.b)("GET", "/api/articles")).status).to.equal(200);
    expect((await api(second.url, T.b)("GET", "/api/articles")).status).to.equal(200);
  });
});
