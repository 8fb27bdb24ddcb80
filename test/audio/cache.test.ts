import { mkdtemp, rm, readdir } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { expect } from "chai";
import { chunkKey, openDiskCache } from "../../services/audio/cache/index.js";
import { createLocalEngine, type SpeechEngine } from "../../services/audio/engine/index.js";
import { mp3Duration, parseFrames } from "../../services/audio/mp3/index.js";
import { renderWithProviders } from "../../services/audio/pipeline.js";
import { createOpenAiProvider, createSpeechRouter, localProvider, reencode } from "../../services/audio/providers/index.js";
import { startFakeProviders, type FakeProviders } from "../support/fake-providers.js";

const id = { provider: "openai", model: "tts-1", voice: "nova", lang: "en-US", text: "Hello." };
const key = (n: number) => chunkKey({ ...id, text: `chunk ${n}` });

describe("chunk cache", function () {
  this.timeout(60_000);
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "chunk-cache-"));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("keys on provider, model, voice, language, prompt and text", () => {
    const base = chunkKey(id);
    expect(base).to.match(/^[0-9a-f]{64}$/);
    expect(chunkKey({ ...id })).to.equal(base);
    for (const change of [{ provider: "azure" }, { model: "gpt-4o-mini-tts" }, { voice: "onyx" }, { lang: "de-DE" }, { prompt: "calm" }, { text: "Hello!" }]) {
      expect(chunkKey({ ...id, ...change }), JSON.stringify(change)).not.to.equal(base);
    }
    // Moving characters between fields is a different identity too.
    expect(chunkKey({ ...id, voice: "no", lang: "vaen-US" })).not.to.equal(chunkKey({ ...id, voice: "nova", lang: "en-US" }));
  });

  it("stays within its size bound, evicting the least recently used, also across a reopen", async () => {
    const cache = await openDiskCache({ dir, maxBytes: 3000 });
    for (const n of [1, 2, 3]) await cache.put(key(n), Buffer.alloc(1000, n));
    expect(cache.size()).to.equal(3000);
    // 1 becomes the most recent; adding 4 must push out 2, the least recent.
    expect((await cache.get(key(1)))![0]).to.equal(1);
    await cache.put(key(4), Buffer.alloc(1000, 4));
    expect(cache.size()).to.equal(3000);
    expect(await cache.get(key(2))).to.equal(undefined);
    expect((await cache.get(key(3)))![0]).to.equal(3);
    expect(await cache.get(chunkKey({ ...id, text: "never stored" }))).to.equal(undefined);
    const files = (await readdir(dir, { recursive: true })).filter((f) => String(f).endsWith(".mp3"));
    expect(files).to.have.length(3);

    // A smaller bound on reopen evicts from the old end first (order kept by file mtimes).
    await new Promise((r) => setTimeout(r, 20));
    await cache.get(key(4));
    const reopened = await openDiskCache({ dir, maxBytes: 1000 });
    expect(reopened.size()).to.equal(1000);
    expect((await reopened.get(key(4)))![0]).to.equal(4);
    expect(await reopened.get(key(1))).to.equal(undefined);
  });

  it("keeps other entries under their own extension, and without touching on a hit evicts the least recently written", async () => {
    const meters = await openDiskCache({ dir, maxBytes: 2000, ext: ".meter", touch: false });
    for (const n of [1, 2]) {
      await meters.put(key(n), Buffer.alloc(1000, n));
      await new Promise((r) => setTimeout(r, 20));
    }
    expect((await meters.get(key(1)))![0]).to.equal(1);
    expect((await readdir(dir, { recursive: true })).filter((f) => String(f).endsWith(".meter"))).to.have.length(2);
    // The hit did not touch 1's file: after a reopen it is the oldest, and goes first.
    const reopened = await openDiskCache({ dir, maxBytes: 1000, ext: ".meter", touch: false });
    expect(await reopened.get(key(1))).to.equal(undefined);
    expect((await reopened.get(key(2)))![0]).to.equal(2);
    // A chunk cache in the same folder sees none of them.
    expect((await openDiskCache({ dir, maxBytes: 1000 })).size()).to.equal(0);
  });

  it("rejects keys that are not digests instead of touching other paths", async () => {
    const cache = await openDiskCache({ dir, maxBytes: 1000 });
    const err = await cache.put("../../etc/passwd", Buffer.from("x")).catch((e: Error) => e);
    expect((err as Error).message).to.match(/SHA-256/);
  });

  describe("in the provider pipeline", () => {
    let engine: SpeechEngine;
    let fake: FakeProviders;
    const clips = new Map<string, Promise<Buffer>>();
    let oddFormat: ((text: string) => boolean) | undefined;

    before(async () => {
      engine = await createLocalEngine({ threads: 2 });
    });
    after(async () => {
      await engine?.close();
    });
    beforeEach(async () => {
      oddFormat = undefined;
      fake = await startFakeProviders({
        async audio(text, voice) {
          const k = `${voice}|${text}`;
          if (!clips.has(k)) clips.set(k, engine.synthesize({ text, voice, lang: "en-US" }));
          const mp3 = await clips.get(k)!;
          // Some answers in another stream (16 kHz, 32 kbps), as a provider changing formats would send.
          return oddFormat?.(text) ? reencode(mp3, { sampleRate: 16000, channels: 1, bitrate: 32 }) : mp3;
        },
      });
    });
    afterEach(async () => {
      await fake.close();
    });

    const router = async (cacheDir: string) =>
      createSpeechRouter({
        providers: { openai: createOpenAiProvider({ apiKey: "sk-test-openai-key-0123456789", baseUrl: fake.openaiBaseUrl }), local: localProvider(engine) },
        cache: await openDiskCache({ dir: cacheDir, maxBytes: 50 * 1024 * 1024 }),
      });

    const paragraphs = ["The council met on Tuesday evening.", "It approved the budget for next year.", "Critics want more money for schools.", "The mayor will sign it next week."];
    const article = (paras: string[]) => ({ title: "Council news", text: paras.join("\n\n"), lang: "en-US", voice: "nova" });

    it("re-synthesizes only the changed paragraph; identical text costs no request", async () => {
      const speech = await router(dir);
      const first = await renderWithProviders(article(paragraphs), speech);
      expect(first.provider).to.equal("openai");
      expect(fake.calls).to.have.length(first.chunks);
      expect(first.chunks).to.equal(5);

      const again = await renderWithProviders(article(paragraphs), speech);
      expect(fake.calls).to.have.length(5);
      expect(again.fullDuration).to.be.closeTo(first.fullDuration, 1e-6);

      const edited = [...paragraphs];
      edited[2] = "Critics want much more money for schools and libraries.";
      const third = await renderWithProviders(article(edited), speech);
      expect(fake.calls).to.have.length(6);
      expect(fake.calls[5].json?.input).to.equal(edited[2]);
      expect(third.fullDuration).to.be.greaterThan(first.fullDuration);

      // A different voice is different audio: nothing reused.
      await renderWithProviders({ ...article(paragraphs), voice: "onyx" }, speech);
      expect(fake.calls).to.have.length(11);
    });

    it("caches local chunks per loudness target (leveled before encoding) and shares provider chunks across targets (normalised after assembly)", async () => {
      const cache = await openDiskCache({ dir, maxBytes: 50 * 1024 * 1024 });
      const loud = { lufs: -16, truePeak: -1.5 };
      const speech = createSpeechRouter({ providers: { openai: createOpenAiProvider({ apiKey: "sk-test-openai-key-0123456789", baseUrl: fake.openaiBaseUrl }), local: localProvider(engine) }, cache });
      await renderWithProviders(article(paragraphs), speech);
      const requests = fake.calls.length;
      await renderWithProviders(article(paragraphs), speech, { loudness: loud });
      expect(fake.calls).to.have.length(requests);

      let synthesized = 0;
      const counting: SpeechEngine = { ...engine, synthesize: (req, signal) => (synthesized++, engine.synthesize(req, signal)) };
      const local = createSpeechRouter({ providers: { local: localProvider(counting) }, cache });
      const first = await renderWithProviders(article(paragraphs), local);
      expect(first.provider).to.equal(engine.name);
      expect(synthesized).to.equal(first.chunks);
      await renderWithProviders(article(paragraphs), local);
      expect(synthesized).to.equal(first.chunks);
      await renderWithProviders(article(paragraphs), local, { loudness: loud });
      expect(synthesized).to.equal(2 * first.chunks);
    });

    it("re-encodes only chunks whose stream differs from the article's", async () => {
      oddFormat = (text) => text.startsWith("It approved");
      const r = await renderWithProviders(article(paragraphs), await router(dir));
      expect(r.reencoded).to.equal(1);
      const frames = parseFrames(r.full);
      expect(new Set(frames.map((f) => f.sampleRate))).to.deep.equal(new Set([engine.format.sampleRate]));
      expect(r.fullDuration).to.be.closeTo(mp3Duration(r.full), 1e-6);

      oddFormat = undefined;
      const plain = await renderWithProviders(article(paragraphs), await router(path.join(dir, "other")));
      expect(plain.reencoded).to.equal(0);
      // Same speech either way: the re-encoded chunk keeps its length within a few frames.
      expect(r.fullDuration).to.be.closeTo(plain.fullDuration, 0.3);
    });
  });
});
