// A render stopped by the worker's drain deadline must stop, whenever the deadline passes:
// also while the article's text is still being prepared, before the first chunk is asked for.
import { expect } from "chai";
import type { SpeechEngine } from "../../services/audio/engine/index.js";
import { renderWithProviders } from "../../services/audio/pipeline.js";
import { createSpeechRouter, localProvider } from "../../services/audio/providers/index.js";
import { inlineTextWork, type TextWork } from "../../services/audio/text/work.js";
import { ARTICLES } from "./fixtures/articles.js";

describe("audio pipeline: a render aborted before its first chunk", () => {
  const article = { ...ARTICLES.find((a) => a.lang === "en-US")!, voice: "alloy" };

  function countingEngine(): SpeechEngine & { asked: number } {
    const engine = {
      name: "local",
      concurrency: 2,
      format: { sampleRate: 22_050, bitrate: 48 },
      asked: 0,
      async synthesize(): Promise<Buffer> {
        engine.asked++;
        throw new Error("no chunk should have been asked for");
      },
      async silence(): Promise<Buffer> {
        return Buffer.alloc(0);
      },
      async close() {},
    };
    return engine as unknown as SpeechEngine & { asked: number };
  }

  it("asks for no chunk when the signal fired while the text was prepared", async () => {
    const engine = countingEngine();
    const router = createSpeechRouter({ providers: { local: localProvider(engine) } });
    const stop = new AbortController();
    // The deadline lands while the text is being planned, before the first chunk is asked for.
    const text: TextWork = {
      ...inlineTextWork,
      plan: async (...args) => {
        const chunks = await inlineTextWork.plan(...args);
        stop.abort(new Error("audio worker shutting down"));
        return chunks;
      },
    };
    const outcome = await renderWithProviders(article, router, { signal: stop.signal, text: { work: text, project: "p" } }).then(
      () => "rendered",
      (e: Error) => e.message,
    );
    expect(outcome).to.equal("audio worker shutting down");
    expect(engine.asked, "chunks asked for after the abort").to.equal(0);
  });

  it("asks for no chunk when the signal had fired before the render began", async () => {
    const engine = countingEngine();
    const router = createSpeechRouter({ providers: { local: localProvider(engine) } });
    const outcome = await renderWithProviders(article, router, { signal: AbortSignal.abort(new Error("stopped")) }).then(
      () => "rendered",
      (e: Error) => e.message,
    );
    expect(outcome).to.equal("stopped");
    expect(engine.asked).to.equal(0);
  });
});
