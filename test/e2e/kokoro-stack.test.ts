// The full stack speaks with Kokoro (issue 34, point 7): `npm run stack` with
// LOCAL_ENGINES=kokoro,pico,espeak loads the model in each audio worker process (one line each
// says so) and an English article comes back in Kokoro's 24 kHz, where eSpeak's is 22.05 kHz.
import { expect } from "chai";
import { streamFormat } from "../../services/audio/providers/reformat.js";
import { api, waitFor } from "../support/http.js";
import { requireKokoro } from "../support/kokoro.js";
import { requireMongo, requireNats } from "../support/servers.js";
import { startTestStack, TOKENS, type TestStack } from "./stack-harness.js";

describe("the full stack with Kokoro (MongoDB, NATS, one process per service)", function () {
  this.timeout(600_000);
  let t: TestStack;

  before(async function () {
    requireKokoro(this);
    const mongoUrl = await requireMongo(this);
    const natsUrl = await requireNats(this);
    t = await startTestStack({ mongoUrl, natsUrl, env: { LOCAL_ENGINES: "kokoro,pico,espeak", ...(process.env.KOKORO_DIR ? { KOKORO_DIR: process.env.KOKORO_DIR } : {}) } });
  });

  afterEach(function () {
    if (this.currentTest?.state === "failed" && t) console.log(`--- last stack output ---\n${t.logs.tail()}`);
  });

  after(async () => {
    await t?.cleanup();
  });

  it("loads Kokoro in every audio worker and reads English with it", async () => {
    const loaded = t.logs.lines.filter((l) => l.text.includes("Kokoro (English) loaded"));
    expect(new Set(loaded.map((l) => l.proc)).size, loaded.map((l) => l.proc).join(", ")).to.be.at.least(2);
    const A = api(t.stack.url, TOKENS.aFull);
    const created = await A("POST", "/api/articles", { title: "Harbour works", text: "The harbour reopens on Monday. Ferries run every hour until the end of the month.", voice: "nova", lang: "en-US" });
    expect(created.status, created.text).to.equal(200);
    const ready = await waitFor("ready", async () => {
      const a = (await A("GET", `/api/articles/${created.body.id}`)).body.article;
      return a.status === "ready" ? a : undefined;
    }, 300_000, 250);
    const mp3 = Buffer.from(await (await fetch(ready.audio)).arrayBuffer());
    expect(streamFormat(mp3)?.sampleRate, "Kokoro's 24 kHz").to.equal(24_000);
  });
});
