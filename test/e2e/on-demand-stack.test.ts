// Audio on demand on the full stack (issue 22, point 5): the scenarios of
// on-demand.test.ts against auth, articles, two audio workers and the gateway
// as separate processes, MongoDB and NATS JetStream (priority on the
// project's `.first` subject). The reconciler ticks every second here, so the
// parked articles sit through several of its passes.
import { requireMongo, requireNats } from "../support/servers.js";
import { sleep } from "../support/wait.js";
import { LIVE_IDLE_MS, onDemandScenarios } from "./on-demand-scenarios.js";
import { ADMIN_TOKEN, startTestStack, type TestStack } from "./stack-harness.js";

const INTERNAL = "internal-token-for-on-demand-stack-0123456789";
const RECONCILE_MS = 1_000;

describe("audio on demand end to end (full stack: MongoDB, NATS, one process per service)", function () {
  this.timeout(1_200_000);
  let t: TestStack;
  const figures: Record<string, number> = {};

  before(async function () {
    const mongoUrl = await requireMongo(this);
    const natsUrl = await requireNats(this);
    t = await startTestStack({ mongoUrl, natsUrl, env: { INTERNAL_TOKEN: INTERNAL, LIVE_AUDIO_IDLE_MS: LIVE_IDLE_MS, RECONCILE_INTERVAL_MS: String(RECONCILE_MS), RECONCILE_STALE_MS: String(RECONCILE_MS) } });
  });

  afterEach(function () {
    if (this.currentTest?.state === "failed" && t) console.log(`--- last stack output ---\n${t.logs.tail()}`);
  });

  after(async () => {
    if (Object.keys(figures).length) console.log(`      on demand, full stack: ${JSON.stringify(figures)}`);
    await t?.cleanup();
  });

  onDemandScenarios(() => ({
    url: t.stack.url,
    authUrl: t.stack.process("auth").url,
    articlesUrl: t.stack.process("articles").url,
    adminToken: ADMIN_TOKEN,
    internalToken: INTERNAL,
    // Stored more than a stale period ago, then three more passes.
    reconcilerTicks: () => sleep(RECONCILE_MS * 4),
    figures,
  }));
});
