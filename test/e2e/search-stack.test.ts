// Search end to end on the full stack: MongoDB's words index behind the articles service in a
// process of its own (search-scenarios.ts).
import { requireMongo, requireNats } from "../support/servers.js";
import { startTestStack, TOKENS, type TestStack } from "./stack-harness.js";
import { searchScenarios } from "./search-scenarios.js";

describe("search end to end (full stack: MongoDB, NATS, one process per service)", function () {
  this.timeout(180_000);
  let t: TestStack;

  before(async function () {
    const mongoUrl = await requireMongo(this);
    const natsUrl = await requireNats(this);
    t = await startTestStack({ mongoUrl, natsUrl });
  });

  afterEach(function () {
    if (this.currentTest?.state === "failed" && t) console.log(`--- last stack output ---\n${t.logs.tail()}`);
  });

  after(async () => {
    await t?.cleanup();
  });

  searchScenarios(() => ({ url: t.stack.url, a: TOKENS.aFull, aRead: TOKENS.aRead, b: TOKENS.bFull }));
});
