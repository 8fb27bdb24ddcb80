import { expect } from "chai";
import { createLocalEngine, type SpeechEngine, type SpeechRequest } from "../../services/audio/engine/index.js";
import { requireNativeEngine } from "../support/native-engine.js";
import { LOCAL_FORMAT } from "../../services/audio/engine/types.js";
import { mp3Duration, parseFrames, silenceFrames } from "../../services/audio/mp3/index.js";
import { renderArticle } from "../../services/audio/pipeline.js";

const frameSeconds = (buf: Buffer) => parseFrames(buf).reduce((t, f) => t + f.samples / f.sampleRate, 0);

/** Silent MP3 of 60 ms per character, with in-flight bookkeeping. */
function fakeEngine(opts: { failOn?: string; delayMs?: number } = {}) {
  const calls: SpeechRequest[] = [];
  let inFlight = 0;
  const stats = { maxInFlight: 0, finished: 0 };
  const engine: SpeechEngine = {
    name: "fake",
    format: LOCAL_FORMAT,
    async synthesize(req, signal) {
      calls.push(req);
      inFlight++;
      stats.maxInFlight = Math.max(stats.maxInFlight, inFlight);
      try {
        await new Promise((r) => setTimeout(r, opts.delayMs ?? 5));
        signal?.throwIfAborted();
        if (opts.failOn && req.text.includes(opts.failOn)) throw new Error(`cannot say ${opts.failOn}`);
        stats.finished++;
        return silenceFrames(LOCAL_FORMAT, req.text.length * 60);
      } finally {
        inFlight--;
      }
    },
    async silence(ms) {
      return silenceFrames(LOCAL_FORMAT, ms);
    },
    async close() {},
  };
  return { engine, calls, stats };
}

const ENGLISH = [
  "The city council approved the new budget on Tuesday after a debate that lasted well into the night.",
  "Dr. Alvarez, who chairs the finance committee, said the plan would cost about 3.5 million dollars over five years.",
  "Critics argued that the money should go to schools first; supporters pointed to the state of the roads.",
  "The mayor is expected to sign it next week, and the first projects could start in the spring.",
];

function longArticle(chars: number): string {
  const paras: string[] = [];
  let total = 0;
  for (let p = 0; total < chars; p++) {
    const para = [0, 1, 2, 3].map((i) => ENGLISH[(p + i) % ENGLISH.length]).join(" ");
    paras.push(para);
    total += para.length + 2;
  }
  return paras.join("\n\n");
}

describe("audio pipeline", () => {
  for (const kind of ["wasm", "native"] as const) describe(`with the local ${kind} engine`, () => {
    let engine: SpeechEngine;
    before(async function () {
      if (kind === "native") await requireNativeEngine(this);
      engine = await createLocalEngine({ threads: 2, native: kind === "wasm" ? "never" : "always" });
    });
    after(async () => {
      await engine?.close();
    });

    it("renders a ~3,000 character article to valid MP3 with a shorter preview", async function () {
      this.timeout(120_000);
      const text = longArticle(3000);
      expect(text.length).to.be.within(3000, 3600);
      const r = await renderArticle({ title: "Council approves budget", text, lang: "en-US", voice: "alloy" }, engine, { concurrency: 2 });

      expect(r.chunks).to.be.greaterThan(5);
      const frames = parseFrames(r.full);
      expect(frames.length).to.be.greaterThan(1000);
      expect(frames.every((f) => f.sampleRate === engine.format.sampleRate)).to.equal(true);
      // Durations come from the frames, not from an estimate.
      expect(r.fullDuration).to.be.closeTo(frameSeconds(r.full), 1e-6);
      expect(r.previewDuration).to.be.closeTo(frameSeconds(r.preview), 1e-6);
      // 3,000 characters of speech take minutes; the preview is the opening half minute.
      expect(r.fullDuration).to.be.greaterThan(100);
      expect(r.previewDuration).to.be.at.most(30).and.greaterThan(5);
      expect(r.preview.length).to.be.lessThan(r.full.length / 3);
    });

    it("a short German article's preview is the whole audio", async function () {
      this.timeout(60_000);
      const r = await renderArticle({ title: "Kurze Meldung", text: "Am 3. Oktober ist Feiertag. Die Geschäfte bleiben z. B. geschlossen.", lang: "de-DE", voice: "de-DE-KatjaNeural" }, engine);
      expect(r.fullDuration).to.be.greaterThan(2).and.lessThan(30);
      expect(r.previewDuration).to.equal(r.fullDuration);
      expect(r.preview.equals(r.full)).to.equal(true);
    });
  });

  describe("assembly", () => {
    it("puts a title pause and paragraph pauses between the spoken chunks", async () => {
      const { engine, calls } = fakeEngine();
      const r = await renderArticle({ title: "Title", text: "First paragraph here.\n\nSecond one.\n\nThird.", lang: "en-US", voice: "alloy" }, engine);
      expect(calls.map((c) => c.text)).to.deep.equal(["Title", "First paragraph here.", "Second one.", "Third."]);
      const speech = calls.reduce((t, c) => t + mp3Duration(silenceFrames(LOCAL_FORMAT, c.text.length * 60)), 0);
      const pauses = mp3Duration(silenceFrames(LOCAL_FORMAT, 700)) + 2 * mp3Duration(silenceFrames(LOCAL_FORMAT, 400));
      expect(r.fullDuration).to.be.closeTo(speech + pauses, 1e-6);
    });

    it("cuts the preview at a chunk boundary at or below the preview length", async () => {
      const { engine, calls } = fakeEngine();
      const text = longArticle(1500);
      const r = await renderArticle({ title: "Budget", text, lang: "en-US", voice: "alloy" }, engine, { previewSeconds: 20, maxChunkChars: 120 });
      expect(r.previewDuration).to.be.at.most(20);
      // The preview ends exactly where some chunk ends: the sum of an opening run of parts.
      const chunkEnds: number[] = [];
      let t = 0;
      calls.forEach((c, i) => {
        t += mp3Duration(silenceFrames(LOCAL_FORMAT, c.text.length * 60));
        chunkEnds.push(t);
        if (i === 0) t += mp3Duration(silenceFrames(LOCAL_FORMAT, 700));
      });
      const ends = chunkEnds.filter((e) => e <= 20);
      expect(r.previewDuration).to.be.closeTo(ends[ends.length - 1], 0.5);
      // and the next chunk would not have fitted
      expect(chunkEnds[ends.length]).to.be.greaterThan(20);
    });

    it("keeps the title and first sentence even when they exceed the preview length", async () => {
      const { engine } = fakeEngine();
      const r = await renderArticle({ title: "A rather long title", text: "One sentence that is long enough. Two.", lang: "en-US", voice: "alloy" }, engine, { previewSeconds: 1, maxChunkChars: 34 });
      const title = mp3Duration(silenceFrames(LOCAL_FORMAT, "A rather long title".length * 60));
      const first = mp3Duration(silenceFrames(LOCAL_FORMAT, "One sentence that is long enough.".length * 60));
      expect(r.previewDuration).to.be.closeTo(title + first + mp3Duration(silenceFrames(LOCAL_FORMAT, 700)), 1e-6);
      expect(r.previewDuration).to.be.lessThan(r.fullDuration);
    });

    it("bounds the chunks synthesized at once", async () => {
      const { engine, stats } = fakeEngine({ delayMs: 15 });
      await renderArticle({ title: "T", text: longArticle(1200), lang: "en-US", voice: "alloy" }, engine, { concurrency: 3, maxChunkChars: 100 });
      expect(stats.maxInFlight).to.equal(3);
    });

    it("fails when one chunk fails and stops starting new ones", async () => {
      const { engine, calls } = fakeEngine({ failOn: "Critics", delayMs: 10 });
      const text = longArticle(3000);
      let error: Error | undefined;
      await renderArticle({ title: "T", text, lang: "en-US", voice: "alloy" }, engine, { concurrency: 2, maxChunkChars: 120 }).catch((e) => (error = e));
      expect(error?.message).to.equal("cannot say Critics");
      expect(calls.length).to.be.lessThan(10);
    });

    it("rejects an unsupported language and an article with nothing to read", async () => {
      const { engine, calls } = fakeEngine();
      const err1 = await renderArticle({ title: "T", text: "x", lang: "fr-FR", voice: "alloy" }, engine).catch((e: Error) => e);
      expect((err1 as Error).message).to.match(/Unsupported language 'fr-FR'/);
      const err2 = await renderArticle({ title: " ", text: "<script>x()</script>", lang: "en-US", voice: "alloy", parse: true }, engine).catch((e: Error) => e);
      expect((err2 as Error).message).to.equal("The article has no readable text");
      expect(calls).to.have.length(0);
    });

    it("stops when the caller aborts", async () => {
      const { engine, stats } = fakeEngine({ delayMs: 20 });
      const ac = new AbortController();
      setTimeout(() => ac.abort(new Error("client went away")), 30);
      const err = await renderArticle({ title: "T", text: longArticle(3000), lang: "en-US", voice: "alloy" }, engine, { signal: ac.signal, maxChunkChars: 100 }).catch((e: Error) => e);
      expect((err as Error).message).to.equal("client went away");
      expect(stats.finished).to.be.lessThan(10);
    });
  });
});
