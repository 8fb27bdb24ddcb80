// Verified oEmbed hosts on the embedded default (SQLite auth store) and on the
// full stack (MongoDB auth store, the auth service in its own process).
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { startEmbedded, type Embedded } from "../../launch/embedded.js";
import { TOKENS, startTestStack, type TestStack } from "../e2e/stack-harness.js";
import { requireMongo, requireNats } from "../support/servers.js";
import { OEMBED_TEST_ENV, OwnerSite, oembedVerificationScenarios } from "./oembed-verify-scenarios.js";
import { sink } from "../support/sink.js";

const OWNER = "oembed-owner-full-0123456789";
const SQUATTER = "oembed-squatter-full-0123456789";

describe("verified oEmbed hosts (embedded)", function () {
  this.timeout(180_000);
  const site = new OwnerSite();
  let dataDir: string;
  let sys: Embedded;

  before(async () => {
    await site.start();
    dataDir = await mkdtemp(path.join(tmpdir(), "e2e-oembed-"));
    const seed = JSON.stringify([{ token: OWNER, project: "alpha", scope: "full" }, { token: SQUATTER, project: "beta", scope: "full" }]);
    sys = await startEmbedded({ PORT: "0", HOST: "127.0.0.1", DATA_DIR: dataDir, SEED_TOKENS: seed, AUDIO_ENGINE: process.env.AUDIO_ENGINE, ...OEMBED_TEST_ENV }, sink());
  });
  after(async () => {
    await sys?.close();
    await site.stop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  oembedVerificationScenarios(() => ({ url: sys.url, ownerToken: OWNER, squatterToken: SQUATTER, site }));
});

describe("verified oEmbed hosts (full stack, MongoDB)", function () {
  this.timeout(240_000);
  const site = new OwnerSite();
  let t: TestStack;

  before(async function () {
    const mongoUrl = await requireMongo(this);
    const natsUrl = await requireNats(this);
    await site.start();
    t = await startTestStack({ mongoUrl, natsUrl, env: { AUDIO_REPLICAS: "1", ...OEMBED_TEST_ENV } });
  });
  afterEach(function () {
    if (this.currentTest?.state === "failed" && t) console.log(`--- last stack output ---\n${t.logs.tail()}`);
  });
  after(async () => {
    await t?.cleanup();
    await site.stop();
  });

  oembedVerificationScenarios(() => ({ url: t.stack.url, ownerToken: TOKENS.aFull, squatterToken: TOKENS.bFull, site }));
});
