// Bulk jobs on the full stack (issue 36, point 2): the scenarios of bulk.test.ts
// against auth, articles, audio workers and the gateway as separate processes,
// MongoDB and NATS (the jobs paced through the gateways' shared KV buckets).
import { requireMongo, requireNats } from "../support/servers.js";
import { bulkScenarios } from "./bulk-scenarios.js";
import { ADMIN_TOKEN, startTestStack, type TestStack } from "./stack-harness.js";

const INTERNAL = "internal-token-for-bulk-stack-0123456789";

describe("bulk jobs end to end (full stack: MongoDB, NATS, one process per service)", function () {
  this.timeout(300_000);
  let t: TestStack;

  before(async function () {
    const mongoUrl = await requireMongo(this);
    const natsUrl = await requireNats(this);
    t = await startTestStack({ mongoUrl, natsUrl, env: { INTERNAL_TOKEN: INTERNAL } });
  });

  afterEach(function () {
    if (this.currentTest?.state === "failed" && t) console.log(`--- last stack output ---\n${t.logs.tail()}`);
  });

  after(async () => {
    await t?.cleanup();
  });

  bulkScenarios(() => ({
    url: t.stack.url,
    authUrl: t.stack.process("auth").url,
    articlesUrl: t.stack.process("articles").url,
    adminToken: ADMIN_TOKEN,
    internalToken: INTERNAL,
  }));
});
