// The status-table scenarios of statuses.test.ts on the full stack: auth,
// articles, two audio workers and the gateway as separate processes, MongoDB
// and NATS JetStream. The concurrency cases matter most here: the limit and
// balance counters are MongoDB conditional updates raced by real requests.
import { PublisherSite, statusScenarios } from "./statuses-scenarios.js";
import { requireMongo, requireNats } from "../support/servers.js";
import { ADMIN_TOKEN, startTestStack, type TestStack } from "./stack-harness.js";

const INTERNAL = "internal-token-for-statuses-stack-0123456789";

describe("statuses end to end (full stack: MongoDB, NATS, one process per service; REST + admin CLI)", function () {
  this.timeout(120_000);
  let t: TestStack;
  const site = new PublisherSite();

  before(async function () {
    const mongoUrl = await requireMongo(this);
    const natsUrl = await requireNats(this);
    await site.start();
    t = await startTestStack({ mongoUrl, natsUrl, env: { INTERNAL_TOKEN: INTERNAL, FETCH_ALLOW_PRIVATE: "127.0.0.1" } });
  });

  afterEach(function () {
    if (this.currentTest?.state === "failed" && t) console.log(`--- last stack output ---\n${t.logs.tail()}`);
  });

  after(async () => {
    await t?.cleanup();
    await site.stop();
  });

  statusScenarios(
    () => ({
      url: t.stack.url,
      authUrl: t.stack.process("auth").url,
      articlesUrl: t.stack.process("articles").url,
      adminToken: ADMIN_TOKEN,
      internalToken: INTERNAL,
    }),
    site,
  );
});
