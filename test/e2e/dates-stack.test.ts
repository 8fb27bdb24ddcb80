// Publication dates, list order and language detection on the full stack: gateway, auth and
// articles as separate processes on MongoDB and NATS (dates-scenarios.ts).
import { requireMongo, requireNats } from "../support/servers.js";
import { datesScenarios } from "./dates-scenarios.js";
import { startTestStack, TOKENS, type TestStack } from "./stack-harness.js";

describe("publication dates and languages (full stack: MongoDB, NATS, one process per service)", function () {
  this.timeout(120_000);
  let t: TestStack;

  before(async function () {
    const mongoUrl = await requireMongo(this);
    const natsUrl = await requireNats(this);
    t = await startTestStack({ mongoUrl, natsUrl, env: { RATE_LIMIT_IMPORTS_PER_SECOND: "100000", RATE_LIMIT_IMPORTS_BURST: "400000" } });
  });
  afterEach(function () {
    if (this.currentTest?.state === "failed" && t) console.log(`--- last stack output ---\n${t.logs.tail()}`);
  });
  after(async () => {
    await t?.cleanup();
  });

  datesScenarios(() => ({ url: t.stack.url, full: TOKENS.aFull }));
});
