// Chapters from headings on the full stack (chapters-scenarios.ts): admission's
// extraction in the articles process, the audio worker in its own, MongoDB and NATS.
import { chapterScenarios } from "./chapters-scenarios.js";
import { requireMongo, requireNats } from "../support/servers.js";
import { TOKENS, startTestStack, type TestStack } from "./stack-harness.js";

describe("chapters from headings (full stack: MongoDB, NATS, one process per service)", function () {
  this.timeout(300_000);
  let t: TestStack;

  before(async function () {
    t = await startTestStack({ mongoUrl: await requireMongo(this), natsUrl: await requireNats(this), env: { AUDIO_REPLICAS: "1" } });
  });
  afterEach(function () {
    if (this.currentTest?.state === "failed" && t) console.log(`--- last stack output ---\n${t.logs.tail()}`);
  });
  after(async () => t?.cleanup());

  chapterScenarios(() => ({ url: t.stack.url, token: TOKENS.aFull }));
});
