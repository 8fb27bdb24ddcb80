// Timed segments: every sentence of a rendered article starts where a listener hears it start.
// The truth comes from the engine itself: a sentence inside a chunk starts where the chunk's text
// before it ends when that text is rendered alone (the same engine, the same voice). Rendering the
// sentences one at a time and adding up their lengths drifts instead: a sentence alone ends with
// a shorter pause than it gets inside a paragraph, and the error grows along the chunk.
import { expect } from "chai";
import { alignPieces } from "../../services/audio/segments/align.js";
import { findPauses, granuleLevels } from "../../services/audio/segments/pauses.js";
import { createLocalEngine, type SpeechEngine } from "../../services/audio/engine/index.js";
import { parseFrames } from "../../services/audio/mp3/frames.js";
import { mp3Duration } from "../../services/audio/mp3/index.js";
import { PARAGRAPH_BREAK, renderArticle, renderWithProviders, PAUSES, type RenderResult } from "../../services/audio/pipeline.js";
import { createAzureProvider, createOpenAiProvider, createSpeechRouter, localProvider } from "../../services/audio/providers/index.js";
import { openDiskCache } from "../../services/audio/cache/index.js";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { splitSentences } from "../../services/audio/text/index.js";
import type { TimedSegment } from "../../lib/segments.js";
import { extractMainContent } from "../../services/articles/content/extract.js";
import { FAKE_AZURE_KEY, FAKE_OPENAI_KEY, startFakeProviders, type FakeProviders } from "../support/fake-providers.js";
import { requireNativeEngine } from "../support/native-engine.js";

const EN = [
  "The council met on Tuesday evening to discuss the new budget, which had been delayed twice. Members argued for nearly three hours, and several residents spoke. In the end, the plan passed by a narrow margin.",
  "Work on the bridge will begin next spring, officials said. \"We have waited long enough,\" the mayor told reporters. Critics, however, warned that costs could rise, and a second vote is planned for June.",
  "Until then, the old bridge stays open to traffic, but trucks must take the ring road. The city expects the work to take two years. Residents can follow the progress online.",
  "Shops near the river fear a quiet summer. Some owners asked for help with their rents. The council promised to look at the request before the holidays.",
];
const DE = [
  "Der Stadtrat hat am Dienstagabend über den neuen Haushalt beraten, der zweimal verschoben worden war. Die Mitglieder stritten fast drei Stunden lang, und mehrere Anwohner meldeten sich zu Wort. Am Ende wurde der Plan knapp angenommen.",
  "Die Arbeiten an der Brücke sollen im nächsten Frühjahr beginnen, hieß es. Kritiker warnten jedoch vor steigenden Kosten. Eine zweite Abstimmung ist für Juni geplant.",
  "Bis dahin bleibt die alte Brücke für den Verkehr offen, Lastwagen müssen aber die Ringstraße nehmen. Die Stadt rechnet mit zwei Jahren Bauzeit.",
];

const seconds = (mp3: Buffer) => parseFrames(mp3).reduce((s, f) => s + f.samples / f.sampleRate, 0);
const sentencesOf = (segments: TimedSegment[]) => segments.flatMap((s) => s.sentences);

/** Where each chunk's audio starts in the full file: after the lead-in, then after each join's pause. */
function chunkStarts(r: RenderResult, leadIn: number): number[] {
  return [leadIn, ...r.joins.map((j) => j.seconds + j.pauseSeconds)];
}

/** The true start of every sentence, chunk by chunk (chunks in the order they are heard). */
async function truth(chunks: string[], starts: number[], lang: string, speak: (text: string) => Promise<Buffer>): Promise<number[]> {
  const out: number[] = [];
  for (const [c, text] of chunks.entries()) {
    let from = 0;
    const offsets = text.split(PARAGRAPH_BREAK).flatMap((p) => splitSentences(p, lang)).map((s) => (from = text.indexOf(s, from)));
    for (const [k, offset] of offsets.entries()) out.push(k === 0 ? starts[c] : starts[c] + seconds(await speak(text.slice(0, offset).trimEnd())));
  }
  return out;
}

/** The chunks' texts in the order they are heard: each time, the one whose opening comes next in the article. */
function inArticleOrder(texts: string[], article: string): string[] {
  const left = [...texts];
  const out: string[] = [];
  let cursor = 0;
  const at = (t: string) => article.indexOf(t.split(PARAGRAPH_BREAK)[0].slice(0, 40), cursor);
  while (left.length) {
    const next = left.reduce((best, t) => (at(t) !== -1 && (at(best) === -1 || at(t) < at(best)) ? t : best));
    out.push(next);
    cursor = at(next) + next.split(PARAGRAPH_BREAK)[0].length;
    left.splice(left.indexOf(next), 1);
  }
  return out;
}

function checkShape(segments: TimedSegment[], fullDuration: number): void {
  expect(segments[0].kind).to.equal("title");
  expect(segments.slice(1).every((s) => s.kind === (s.heading ? "heading" : "paragraph"))).to.equal(true);
  let last = 0;
  for (const s of segments) {
    expect(s.start).to.equal(s.sentences[0].start);
    expect(s.end).to.equal(s.sentences[s.sentences.length - 1].end);
    expect(s.text).to.equal(s.sentences.map((x) => x.text).join(" "));
    for (const x of s.sentences) {
      expect(x.start, x.text).to.be.at.least(last);
      expect(x.end, x.text).to.be.above(x.start);
      expect(Math.round(x.start * 1000) / 1000).to.equal(x.start);
      last = x.end;
    }
  }
  expect(last).to.be.at.most(fullDuration);
}

function report(name: string, errors: number[]): void {
  const sorted = errors.map(Math.abs).sort((a, b) => a - b);
  console.log(`      ${name}: ${errors.length} sentence starts, error median ${(sorted[Math.floor(sorted.length / 2)] * 1000).toFixed(0)} ms, worst ${(sorted[sorted.length - 1] * 1000).toFixed(0)} ms`);
}

describe("timed segments", function () {
  this.timeout(600_000);

  describe("alignment inside a chunk", () => {
    it("separates sentences at the deep pauses, not at a comma's shallow one", () => {
      // Three sentences of 40, 40 and 20 characters in 10 s: pauses at 4 s (deep), 6 s (a comma), 8 s (deep).
      const pauses = [
        { start: 3.7, end: 4.0, depth: 200 },
        { start: 5.9, end: 6.0, depth: 40 },
        { start: 7.7, end: 8.0, depth: 200 },
      ];
      const t = alignPieces([40, 40, 20], 10, pauses);
      expect(t.map((x) => x.start)).to.deep.equal([0, 4, 8]);
      expect(t.map((x) => x.end)).to.deep.equal([3.7, 7.7, 10]);
    });

    it("keeps the speaking rate: a long sentence is not cut at its commas to favour a deeper pause elsewhere", () => {
      // 100 + 20 characters: the only sensible boundary is near 100/120 of the time.
      const pauses = [
        { start: 2.0, end: 2.3, depth: 150 },
        { start: 8.0, end: 8.3, depth: 120 },
      ];
      const t = alignPieces([100, 20], 10, pauses);
      expect(t[1].start).to.be.closeTo(8.3, 1e-9);
    });

    it("places a boundary by characters where no pause was found, and a single piece spans the chunk", () => {
      expect(alignPieces([30, 10], 8, [])).to.deep.equal([
        { start: 0, end: 6 },
        { start: 6, end: 8 },
      ]);
      expect(alignPieces([30], 8, [{ start: 3, end: 3.5, depth: 100 }])).to.deep.equal([{ start: 0, end: 8 }]);
    });

    it("finds the pause between two utterances in an MP3's frames, and no pause at its ends", async () => {
      const engine = await createLocalEngine({ threads: 1, native: "never" });
      try {
        const a = await engine.synthesize({ text: "First we speak.", voice: "alloy", lang: "en-US" });
        const gap = await engine.silence(600);
        const b = await engine.synthesize({ text: "Then we speak again.", voice: "alloy", lang: "en-US" });
        const lead = await engine.silence(300);
        const pauses = findPauses(granuleLevels(Buffer.concat([lead, a, gap, b, lead]))!);
        const boundary = mp3Duration(lead) + seconds(a) + seconds(gap);
        const deepest = pauses.reduce((x, y) => (y.depth > x.depth ? y : x));
        expect(deepest.end).to.be.closeTo(boundary, 0.08);
        expect(deepest.end - deepest.start).to.be.at.least(0.55);
        expect(pauses.every((p) => p.start > 0.3 && p.end < seconds(Buffer.concat([lead, a, gap, b])) + 0.01)).to.equal(true);
      } finally {
        await engine.close();
      }
    });
  });

  describe("the article's own words", () => {
    it("shows sentences as written, not as read, and marks headings of parsed articles", async () => {
      const engine = await createLocalEngine({ threads: 2, native: "never" });
      try {
        const text = "<h2>Money</h2><p>The budget grew 3.5% in 2024, Dr. Smith said. It was approx. 12 km long.</p><h3>Roads</h3><p>Work starts on 1/4.</p>";
        const r = await renderArticle({ title: "Budget 2024", text, lang: "en-US", voice: "alloy", parse: true }, engine);
        expect(r.segments.map((s) => [s.kind, s.text, s.heading])).to.deep.equal([
          ["title", "Budget 2024", undefined],
          ["heading", "Money", 2],
          ["paragraph", "The budget grew 3.5% in 2024, Dr. Smith said. It was approx. 12 km long.", undefined],
          ["heading", "Roads", 3],
          ["paragraph", "Work starts on 1/4.", undefined],
        ]);
        expect(r.segments[2].sentences.map((s) => s.text)).to.deep.equal(["The budget grew 3.5% in 2024, Dr. Smith said.", "It was approx. 12 km long."]);
        checkShape(r.segments, r.fullDuration);
        // What the worker is handed for such an article: admission's extracted text, plain, its headings marked (lib/headings.ts).
        const extracted = extractMainContent(text).text;
        const plain = await renderArticle({ title: "Budget 2024", text: extracted, lang: "en-US", voice: "alloy", parse: false }, engine);
        expect(plain.segments.map((s) => [s.kind, s.text, s.heading])).to.deep.equal(r.segments.map((s) => [s.kind, s.text, s.heading]));
      } finally {
        await engine.close();
      }
    });
  });

  describe("sentence starts within 250 ms of where they are heard", () => {
    let wasm: SpeechEngine;
    let fake: FakeProviders;
    before(async () => {
      wasm = await createLocalEngine({ threads: 2, native: "never" });
      // The fakes speak what they are sent, whole, with the local engine: a German voice for Azure.
      fake = await startFakeProviders({
        openaiKey: FAKE_OPENAI_KEY,
        azureKey: FAKE_AZURE_KEY,
        audio: (text, voice, provider) => wasm.synthesize(provider === "azure" ? { text, voice: "de-DE-KatjaNeural", lang: "de-DE" } : { text, voice: "nova", lang: "en-US" }),
      });
    });
    after(async () => {
      await fake?.close();
      await wasm?.close();
    });

    async function localEngineCase(name: string, engine: SpeechEngine, paragraphs: string[], lang: "en-US" | "de-DE", voice: string): Promise<void> {
      const heard: string[] = [];
      const spy: SpeechEngine = { ...engine, name: engine.name, format: engine.format, synthesize: (req, signal) => (heard.push(req.text), engine.synthesize(req, signal)), silence: (ms) => engine.silence(ms), close: () => engine.close() };
      const article = { title: "The bridge", text: paragraphs.join("\n\n"), lang, voice };
      const r = await renderArticle(article, spy, { loudness: null });
      checkShape(r.segments, r.fullDuration);
      const chunks = inArticleOrder(heard, `${article.title}\n\n${article.text}`);
      const want = await truth(chunks, chunkStarts(r, mp3Duration(await engine.silence(PAUSES.leadInMs))), lang, (text) => engine.synthesize({ text, voice, lang, level: null }));
      const got = sentencesOf(r.segments).map((s) => s.start);
      expect(got.length).to.equal(want.length);
      const errors = got.map((t, i) => t - want[i]);
      report(name, errors);
      errors.forEach((e, i) => expect(Math.abs(e), `sentence ${i}: ${sentencesOf(r.segments)[i].text}`).to.be.below(0.25));
    }

    it("the local engine (WASM), English", async () => localEngineCase("local WASM, en", wasm, EN, "en-US", "alloy"));
    it("the local engine (WASM), German", async () => localEngineCase("local WASM, de", wasm, DE, "de-DE", "de-DE-KatjaNeural"));
    it("the local engine (native espeak-ng and lame)", async function () {
      await requireNativeEngine(this);
      const native = await createLocalEngine({ threads: 2, native: "always" });
      try {
        await localEngineCase("local native, en", native, EN, "en-US", "alloy");
      } finally {
        await native.close();
      }
    });

    it("the same segments from cached chunks, and from the fallback engine when the provider fails", async () => {
      const dir = await mkdtemp(path.join(os.tmpdir(), "segments-cache-"));
      try {
        const cache = await openDiskCache({ dir, maxBytes: 64 * 1024 * 1024 });
        const openai = createOpenAiProvider({ apiKey: FAKE_OPENAI_KEY, baseUrl: fake.openaiBaseUrl });
        const router = createSpeechRouter({ providers: { openai, local: localProvider(wasm) }, cache });
        const article = { title: "The bridge", text: EN.join("\n\n"), lang: "en-US", voice: "nova" };
        const first = await renderWithProviders(article, router, { loudness: null });
        const calls = fake.calls.length;
        const again = await renderWithProviders(article, router, { loudness: null });
        expect(fake.calls.length, "every chunk from the cache").to.equal(calls);
        expect(again.segments).to.deep.equal(first.segments);

        // Every request refused for good: the local engine speaks the article, with its own segments.
        fake.failAlways("openai", { kind: "status", status: 400, message: "refused" });
        try {
          const fallback = await renderWithProviders({ ...article, title: "The bridge, again" }, createSpeechRouter({ providers: { openai, local: localProvider(wasm) } }), { loudness: null });
          expect(fallback.provider).to.equal("local-wasm");
          checkShape(fallback.segments, fallback.fullDuration);
          expect(sentencesOf(fallback.segments).map((x) => x.text)).to.deep.equal(["The bridge, again", ...sentencesOf(first.segments).slice(1).map((x) => x.text)]);
        } finally {
          fake.failAlways("openai", undefined);
        }
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    });

    for (const provider of ["openai", "azure"] as const) {
      it(`a cloud provider's audio (${provider}: paragraphs packed into one request)`, async () => {
        const router = createSpeechRouter({
          providers: provider === "openai"
            ? { openai: createOpenAiProvider({ apiKey: FAKE_OPENAI_KEY, baseUrl: fake.openaiBaseUrl }), local: localProvider(wasm) }
            : { azure: createAzureProvider({ key: FAKE_AZURE_KEY, endpoint: fake.azureEndpoint }), local: localProvider(wasm) },
        });
        const [lang, voice, paragraphs] = provider === "openai" ? (["en-US", "nova", EN] as const) : (["de-DE", "de-DE-KatjaNeural", DE] as const);
        const article = { title: "The bridge", text: [...paragraphs, ...paragraphs.map((p) => `${provider === "azure" ? "Später:" : "Later,"} ${p[0].toLowerCase()}${p.slice(1)}`)].join("\n\n"), lang, voice };
        const before = fake.calls.length;
        const r = await renderWithProviders(article, router, { loudness: null });
        checkShape(r.segments, r.fullDuration);
        const sent = fake.calls.slice(before).map((c) => (c.json?.input as string | undefined) ?? c.ssml!.text);
        // OpenAI requests hold up to 4,096 characters: there the paragraphs after the opening are packed together.
        if (provider === "openai") expect(sent.some((t) => t.includes(PARAGRAPH_BREAK)), "some request packs paragraphs").to.equal(true);
        expect(sent.some((t) => splitSentences(t, lang).length > 2), "some request holds several sentences").to.equal(true);
        const speak = (text: string) => wasm.synthesize(provider === "azure" ? { text, voice: "de-DE-KatjaNeural", lang: "de-DE" } : { text, voice: "nova", lang: "en-US" });
        const chunks = inArticleOrder(sent, `${article.title}\n\n${article.text}`);
        const want = await truth(chunks, chunkStarts(r, seconds(await wasm.silence(PAUSES.leadInMs))), lang, speak);
        const got = sentencesOf(r.segments).map((s) => s.start);
        expect(got.length).to.equal(want.length);
        const errors = got.map((t, i) => t - want[i]);
        report(`${provider} (fake, local engine's audio)`, errors);
        errors.forEach((e, i) => expect(Math.abs(e), `sentence ${i}: ${sentencesOf(r.segments)[i].text}`).to.be.below(0.25));
      });
    }
  });
});
