// Preview first (audio on demand): when someone waits, the pipeline hands out the
// preview as soon as the opening chunks settle it, before the rest is rendered, and
// it is the very preview the finished render holds - for the local engine and for a
// cloud provider whose audio is leveled afterwards.
import { expect } from "chai";
import { createLocalEngine, type SpeechEngine } from "../../services/audio/engine/index.js";
import { renderWithProviders } from "../../services/audio/pipeline.js";
import { createOpenAiProvider, createSpeechRouter, localProvider } from "../../services/audio/providers/index.js";
import { FAKE_OPENAI_KEY, startFakeProviders, type FakeProviders } from "../support/fake-providers.js";
import { ARTICLES } from "./fixtures/articles.js";

describe("audio pipeline: preview first", function () {
  this.timeout(300_000);
  let engine: SpeechEngine;
  let fake: FakeProviders;
  before(async () => {
    engine = await createLocalEngine({ threads: 2 });
    // Off target, so the cloud path levels both files.
    fake = await startFakeProviders({ audio: (text) => engine.synthesize({ text, voice: "nova", lang: "en-US", level: { lufs: -14, truePeak: 0 } }) });
  });
  after(async () => {
    await fake?.close();
    await engine?.close();
  });

  // Long enough that the preview is a small part of it.
  const long = { title: "Budget and storm", text: ARTICLES.filter((a) => a.lang === "en-US").slice(0, 4).map((a) => a.text).join("\n\n"), lang: "en-US" };

  for (const [name, voice, router] of [
    ["the local engine", "alloy", () => createSpeechRouter({ providers: { local: localProvider(engine) } })],
    ["a cloud provider (leveled afterwards)", "nova", () => createSpeechRouter({ providers: { openai: createOpenAiProvider({ apiKey: FAKE_OPENAI_KEY, baseUrl: fake.openaiBaseUrl }), local: localProvider(engine) } })],
  ] as const) {
    it(`hands out the finished render's preview before the render ends: ${name}`, async () => {
      let early: { mp3: Buffer; duration: number; whileRendering: boolean } | undefined;
      let done = false;
      const r = await renderWithProviders({ ...long, voice }, router(), {
        onPreview: async (p) => {
          expect(early, "offered once").to.equal(undefined);
          early = { ...p, whileRendering: !done };
        },
      }).finally(() => (done = true));
      expect(early, "an early preview").to.not.equal(undefined);
      expect(early!.whileRendering).to.equal(true);
      expect(r.fullDuration).to.be.greaterThan(early!.duration * 3);
      expect(early!.duration).to.be.within(25, 40);
      expect(early!.duration).to.be.closeTo(r.previewDuration, 1e-6);
      expect(early!.mp3.equals(r.preview), "the same file").to.equal(true);
    });
  }

  it("asks an engine that works on one text at a time (Kokoro's host) for one chunk at a time, in playing order, so the opening is not shared with later chunks", async () => {
    const seen: Record<number, { max: number; order: string[] }> = {};
    for (const concurrency of [1, 2]) {
      let inFlight = 0;
      const record = (seen[concurrency] = { max: 0, order: [] as string[] });
      const counted: SpeechEngine = {
        ...engine,
        concurrency,
        async synthesize(req, signal) {
          record.max = Math.max(record.max, ++inFlight);
          record.order.push(req.text);
          try {
            return await engine.synthesize(req, signal);
          } finally {
            inFlight--;
          }
        },
      };
      // Another title per round: the router has no cache here, but the texts stay apart anyway.
      await renderWithProviders({ ...long, title: `${long.title} ${concurrency}`, voice: "alloy" }, createSpeechRouter({ providers: { local: localProvider(counted) }, localConcurrency: 2 }), {});
    }
    expect(seen[1].max).to.equal(1);
    // The same router gives an engine that works on two at once two chunks: the bound is the engine's.
    expect(seen[2].max).to.equal(2);
    expect(seen[1].order.length).to.be.greaterThan(4);
  });

  it("begins no chunk after the one that settles the preview when the caller stops the render there (the preview lane): none is thrown away", async () => {
    let started = 0;
    let finished = 0;
    const counted: SpeechEngine = {
      ...engine,
      concurrency: 1,
      async synthesize(req, signal) {
        started++;
        const mp3 = await engine.synthesize(req, signal);
        finished++;
        return mp3;
      },
    };
    const stop = new AbortController();
    let preview = false;
    const render = renderWithProviders({ ...long, title: `${long.title}, stopped`, voice: "alloy" }, createSpeechRouter({ providers: { local: localProvider(counted) } }), {
      signal: stop.signal,
      onPreview: async () => {
        // As the audio worker does: store it (here: nothing), then stop; the full render follows in the lane.
        await new Promise((r) => setTimeout(r, 20));
        preview = true;
        stop.abort(new Error("preview stored"));
      },
    });
    await render.then(
      () => expect.fail("the render was stopped"),
      (e: Error) => expect(e.message).to.equal("preview stored"),
    );
    expect(preview).to.equal(true);
    expect(started).to.be.greaterThan(2);
    expect(started, "chunks begun and finished").to.equal(finished);
  });

  it("offers nothing early for an article that is its own preview (the render's preview is the whole)", async () => {
    let offered = false;
    const r = await renderWithProviders({ title: "Short", text: "A short note of two sentences. Nothing more to say.", lang: "en-US", voice: "alloy" }, createSpeechRouter({ providers: { local: localProvider(engine) } }), {
      onPreview: async () => void (offered = true),
    });
    expect(offered).to.equal(false);
    expect(r.preview.equals(r.full)).to.equal(true);
  });
});
