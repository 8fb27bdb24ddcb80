// Create from a URL on the full stack (issue 35, point 1): the scenarios of
// from-url.test.ts against auth, articles, two audio workers and the gateway
// as separate processes, MongoDB and NATS JetStream. The page fetches run in
// the articles process, which reaches the test's site through FETCH_ALLOW_PRIVATE.
import { PageServer } from "../support/article-pages.js";
import { requireMongo, requireNats } from "../support/servers.js";
import { fromUrlScenarios } from "./from-url-scenarios.js";
import { ADMIN_TOKEN, startTestStack, type TestStack } from "./stack-harness.js";

const INTERNAL = "internal-token-for-from-url-stack-0123456789";

describe("create from a URL end to end (full stack: MongoDB, NATS, one process per service)", function () {
  this.timeout(300_000);
  let t: TestStack;
  const site = new PageServer();

  before(async function () {
    const mongoUrl = await requireMongo(this);
    const natsUrl = await requireNats(this);
    await site.start();
    t = await startTestStack({ mongoUrl, natsUrl, env: { INTERNAL_TOKEN: INTERNAL, FETCH_ALLOW_PRIVATE: `127.0.0.1:${site.port}` } });
  });

  afterEach(function () {
    if (this.currentTest?.state === "failed" && t) console.log(`--- last stack output ---\n${t.logs.tail()}`);
  });

  after(async () => {
    await t?.cleanup();
    await site.stop();
  });

  fromUrlScenarios(() => ({
    url: t.stack.url,
    authUrl: t.stack.process("auth").url,
    articlesUrl: t.stack.process("articles").url,
    adminToken: ADMIN_TOKEN,
    internalToken: INTERNAL,
    site,
  }));
});
