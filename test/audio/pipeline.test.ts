import { expect } from "chai";
import { createLocalEngine, type SpeechEngine, type SpeechRequest } from "../../services/audio/engine/index.js";
import { requireNativeEngine } from "../support/native-engine.js";
import { LOCAL_FORMAT } from "../../services/audio/engine/types.js";
import { mp3Duration, parseFrames, silenceFrames } from "../../services/audio/mp3/index.js";
import { PAUSES, renderArticle } from "../../services/audio/pipeline.js";

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
      // A limit to give up at, not a speed: beside busy programs the native engine's niced host gets a
      // tenth of a core, and three minutes of speech once took longer than two minutes to make.
      this.timeout(600_000);
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
    it("puts a lead-in, a title pause, paragraph pauses and a tail around the spoken chunks", async () => {
      const { engine, calls } = fakeEngine();
      const r = await renderArticle({ title: "Title", text: "First paragraph here.\n\nSecond one.\n\nThird.", lang: "en-US", voice: "alloy" }, engine);
      expect(calls.map((c) => c.text)).to.deep.equal(["Title", "First paragraph here.", "Second one.", "Third."]);
      const speech = calls.reduce((t, c) => t + mp3Duration(silenceFrames(LOCAL_FORMAT, c.text.length * 60)), 0);
      const d = (ms: number) => mp3Duration(silenceFrames(LOCAL_FORMAT, ms));
      const pauses = d(PAUSES.leadInMs) + d(PAUSES.titleMs) + 2 * d(PAUSES.paragraphMs) + d(PAUSES.tailMs);
      expect(r.fullDuration).to.be.closeTo(speech + pauses, 1e-6);
      expect(frameSeconds(r.full)).to.be.closeTo(r.fullDuration, 1e-6);
    });

    it("ends the preview at a sentence between 25 and 40 s, nearest 30 s, whatever the chunk sizes", async () => {
      for (const maxChunkChars of [120, 300, 1000]) {
        const { engine, calls } = fakeEngine();
        // 60 ms per character: ~15 s per 250 characters.
        const r = await renderArticle({ title: "Budget", text: longArticle(3000), lang: "en-US", voice: "alloy" }, engine, { maxChunkChars });
        expect(r.previewDuration, `chunks of ${maxChunkChars}`).to.be.within(25, 40);
        // The preview's last chunk ends with a sentence.
        const ends: number[] = [];
        let t = mp3Duration(silenceFrames(LOCAL_FORMAT, PAUSES.leadInMs));
        calls.forEach((c, i) => {
          t += mp3Duration(silenceFrames(LOCAL_FORMAT, c.text.length * 60));
          ends.push(t);
          if (i === 0) t += mp3Duration(silenceFrames(LOCAL_FORMAT, PAUSES.titleMs));
        });
        const tail = mp3Duration(silenceFrames(LOCAL_FORMAT, PAUSES.tailMs));
        const at = ends.findIndex((e) => Math.abs(e + tail - r.previewDuration) < 1e-6);
        expect(at, `chunks of ${maxChunkChars}`).to.be.greaterThan(0);
        expect(calls[at].text).to.match(/[.!?]$/);
      }
    });

    it("keeps the title and first sentence even when they exceed the preview length", async () => {
      const { engine } = fakeEngine();
      const r = await renderArticle({ title: "A rather long title", text: "One sentence that is long enough. Two.", lang: "en-US", voice: "alloy" }, engine, { previewSeconds: 1, maxChunkChars: 34 });
      const d = (ms: number) => mp3Duration(silenceFrames(LOCAL_FORMAT, ms));
      const title = d("A rather long title".length * 60);
      const first = d("One sentence that is long enough.".length * 60);
      expect(r.previewDuration).to.be.closeTo(d(PAUSES.leadInMs) + title + first + d(PAUSES.titleMs) + d(PAUSES.tailMs), 1e-6);
      expect(r.previewDuration).to.be.lessThan(r.fullDuration);
    });

    it("an article not much longer than the preview is its own preview", async () => {
      const { engine } = fakeEngine();
      const r = await renderArticle({ title: "Short", text: "One short sentence. Another short one.", lang: "en-US", voice: "alloy" }, engine);
      expect(r.preview).to.equal(r.full);
      expect(r.previewDuration).to.equal(r.fullDuration);
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
