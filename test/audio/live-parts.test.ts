// Audio on demand, heard while it is made (issue 34): the pipeline hands on the finished file's
// audio a part per chunk in playing order, the first long before the render ends, and the parts
// together are the finished file's frames, byte for byte.
import { expect } from "chai";
import { createLocalEngine, type SpeechEngine } from "../../services/audio/engine/index.js";
import type { LivePart } from "../../services/audio/live-parts.js";
import { scanFrames } from "../../services/audio/mp3/frames.js";
import { renderWithProviders } from "../../services/audio/pipeline.js";
import { createOpenAiProvider, createSpeechRouter, localProvider } from "../../services/audio/providers/index.js";
import { FAKE_OPENAI_KEY, startFakeProviders, type FakeProviders } from "../support/fake-providers.js";
import { ARTICLES } from "./fixtures/articles.js";

describe("audio pipeline: live parts while it is made", function () {
  this.timeout(300_000);
  let engine: SpeechEngine;
  before(async () => {
    engine = await createLocalEngine({ threads: 1 });
  });
  after(async () => {
    await engine?.close();
  });

  const long = { title: "Budget and storm", text: ARTICLES.filter((a) => a.lang === "en-US").slice(0, 3).map((a) => a.text).join("\n\n"), lang: "en-US", voice: "alloy" };

  it("hands on the first part before the render ends, every part in order, and the parts are the full file's frames", async () => {
    const parts: (LivePart & { whileRendering: boolean })[] = [];
    let done = false;
    const r = await renderWithProviders(long, createSpeechRouter({ providers: { local: localProvider(engine) } }), {
      onLive: (p) => parts.push({ ...p, whileRendering: !done }),
    }).finally(() => (done = true));
    expect(parts.length).to.equal(r.chunks);
    expect(parts.map((p) => p.index)).to.deep.equal([...Array(r.chunks).keys()]);
    expect(parts.map((p) => p.last)).to.deep.equal([...Array(r.chunks).keys()].map((i) => i === r.chunks - 1));
    expect(parts[0].whileRendering, "the first part comes while later chunks are still to render").to.equal(true);
    // The full file: its ID3 tag and Info header, then exactly the streamed frames.
    const first = scanFrames(r.full).frames[0];
    const streamed = Buffer.concat(parts.map((p) => p.mp3));
    expect(streamed.length).to.equal(r.full.length - first.offset);
    expect(streamed.equals(r.full.subarray(first.offset)), "the same audio, byte for byte").to.equal(true);
  });

  describe("a cloud provider", () => {
    let fake: FakeProviders;
    before(async () => {
      fake = await startFakeProviders({ audio: (text) => engine.synthesize({ text, voice: "nova", lang: "en-US", level: { lufs: -14, truePeak: 0 } }) });
    });
    after(async () => fake?.close());

    it("is not streamed: its audio is leveled once whole, which changes its frames", async () => {
      const parts: LivePart[] = [];
      const router = createSpeechRouter({ providers: { openai: createOpenAiProvider({ apiKey: FAKE_OPENAI_KEY, baseUrl: fake.openaiBaseUrl }), local: localProvider(engine) } });
      await renderWithProviders({ ...long, voice: "nova" }, router, { onLive: (p) => parts.push(p) });
      expect(parts).to.deep.equal([]);
    });
  });
});
