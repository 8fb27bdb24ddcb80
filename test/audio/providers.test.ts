import { expect } from "chai";
import { createLocalEngine, type SpeechEngine } from "../../services/audio/engine/index.js";
import { parseFrames } from "../../services/audio/mp3/index.js";
import { retryDelay } from "../../services/audio/providers/backoff.js";
import {
  AZURE_OUTPUT_FORMAT,
  createAzureProvider,
  createOpenAiProvider,
  createSpeechRouter,
  localProvider,
  mapVoice,
  ProviderError,
  type SpeechProvider,
} from "../../services/audio/providers/index.js";
import { startFakeProviders, type FakeName, type FakeProviders } from "../support/fake-providers.js";

const OPENAI_KEY = "sk-test-openai-key-0123456789";
const AZURE_KEY = "azure-test-key-0123456789";
const signal = () => new AbortController().signal;

async function failure(p: Promise<unknown>): Promise<ProviderError> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e, "expected a ProviderError").to.be.instanceOf(ProviderError);
  return e as ProviderError;
}

describe("speech providers against fake OpenAI and Azure APIs", function () {
  this.timeout(60_000);
  let engine: SpeechEngine;
  let fake: FakeProviders;
  const clips = new Map<string, Promise<Buffer>>();

  before(async () => {
    engine = await createLocalEngine({ threads: 2 });
  });
  after(async () => {
    await engine?.close();
  });
  /** Real MP3 from the local engine, for the voice the request asked for (mapped to a table voice), made once per text and voice. */
  const clipFor = (text: string, voice: string, provider: FakeName): Promise<Buffer> => {
    const local = provider === "azure" ? (voice.includes("Katja") || voice.includes("Jenny") ? "de-DE-KatjaNeural" : "de-DE-ConradNeural") : voice;
    const lang = provider === "azure" ? "de-DE" : "en-US";
    const key = `${local}|${text}`;
    if (!clips.has(key)) clips.set(key, engine.synthesize({ text, voice: local, lang }));
    return clips.get(key)!;
  };
  beforeEach(async () => {
    fake = await startFakeProviders({ audio: clipFor });
  });
  afterEach(async () => {
    await fake.close();
  });

  const openai = (extra: { model?: string; timeoutMs?: number; apiKey?: string } = {}) =>
    createOpenAiProvider({ apiKey: extra.apiKey ?? OPENAI_KEY, baseUrl: fake.openaiBaseUrl, model: extra.model, timeoutMs: extra.timeoutMs });
  const azure = (extra: { timeoutMs?: number; key?: string } = {}) =>
    createAzureProvider({ key: extra.key ?? AZURE_KEY, endpoint: fake.azureEndpoint, timeoutMs: extra.timeoutMs });

  describe("OpenAI", () => {
    it("posts the documented JSON to /audio/speech with the bearer key and gets MP3 back", async () => {
      const mp3 = await openai({ model: "tts-1-hd" }).synthesize({ text: "Hello from the newsroom.", voice: "onyx", lang: "en-US" }, signal());
      expect(parseFrames(mp3).length).to.be.greaterThan(10);
      const [call] = fake.callsTo("openai");
      expect(call.violation).to.equal(undefined);
      expect(call.method).to.equal("POST");
      expect(call.path).to.equal("/v1/audio/speech");
      expect(call.headers.authorization).to.equal(`Bearer ${OPENAI_KEY}`);
      expect(call.json).to.deep.equal({ model: "tts-1-hd", voice: "onyx", input: "Hello from the newsroom.", response_format: "mp3" });
    });

    it("sends the prompt as instructions and switches to the model that follows them", async () => {
      const p = openai({ model: "tts-1" });
      await p.synthesize({ text: "Breaking news.", voice: "nova", lang: "en-US", prompt: "Calm, slow newsreader." }, signal());
      expect(fake.callsTo("openai")[0].json).to.include({ model: "gpt-4o-mini-tts", instructions: "Calm, slow newsreader." });
      expect(p.model({ text: "x", voice: "nova", lang: "en-US" })).to.equal("tts-1");
    });

    it("refuses input beyond 4,096 characters without calling the API", async () => {
      const err = await openai().synthesize({ text: "a".repeat(4097), voice: "nova", lang: "en-US" }, signal()).catch((e: Error) => e);
      expect((err as Error).message).to.match(/4096/);
      expect(fake.calls).to.have.length(0);
    });

    it("classifies 429 with Retry-After as retryable and keeps the wait", async () => {
      fake.failNext("openai", { kind: "status", status: 429, retryAfter: "2", message: "Rate limit reached" });
      const e = await failure(openai().synthesize({ text: "Hi.", voice: "alloy", lang: "en-US" }, signal()));
      expect(e.retryable).to.equal(true);
      expect(e.retryAfterMs).to.equal(2000);
      expect(e.message).to.match(/HTTP 429: Rate limit reached/);
    });

    it("classifies 500 as retryable, a bad key and an invalid voice as permanent, and never echoes the key", async () => {
      fake.failNext("openai", { kind: "status", status: 500 });
      expect((await failure(openai().synthesize({ text: "Hi.", voice: "alloy", lang: "en-US" }, signal()))).retryable).to.equal(true);

      const wrongKey = "sk-wrong-key-abcdefghijklmnop";
      const bad = await failure(openai({ apiKey: wrongKey }).synthesize({ text: "Hi.", voice: "alloy", lang: "en-US" }, signal()));
      expect(bad.retryable).to.equal(false);
      expect(bad.status).to.equal(401);
      expect(bad.message).not.to.include(wrongKey);
      expect(bad.message).not.to.include("abcdefghijklmnop");

      const voice = await failure(openai().synthesize({ text: "Hi.", voice: "de-DE-KatjaNeural", lang: "de-DE" }, signal()));
      expect(voice.retryable).to.equal(false);
      expect(voice.status).to.equal(400);
    });

    it("treats a timeout, a truncated body, WAV and a JSON 200 as retryable", async function () {
      // Beside two busy programs in a whole run the local engine made the fake's clip more than
      // 10x slower than alone; a limit to give up at, not a speed.
      this.timeout(300_000);
      const p = openai({ timeoutMs: 400 });
      const req = { text: "A sentence long enough to give a few dozen frames of audio.", voice: "echo", lang: "en-US" as const };
      // The fake's answer is made by the local engine on first use: made now, so that a slow machine
      // spends that time here and not inside the truncated answer's timeout.
      await clipFor(req.text, req.voice, "openai");
      fake.failNext("openai", { kind: "timeout" }, { kind: "truncate" }, { kind: "wav" }, { kind: "json200" });
      const started = Date.now();
      const timeout = await failure(p.synthesize(req, signal()));
      // Far below the patient timeout of the other faults, so it was the 0.4 s that ended it, however loaded the machine.
      expect(Date.now() - started).to.be.within(350, 15_000);
      expect(timeout.message).to.match(/no complete answer within 0.4 s/);
      // The other faults get a generous timeout so a loaded machine cannot turn them into timeouts.
      const patient = openai({ timeoutMs: 20_000 });
      const truncated = await failure(patient.synthesize(req, signal()));
      expect(truncated.message).to.match(/cut off|truncated/);
      const wav = await failure(patient.synthesize(req, signal()));
      expect(wav.message).to.match(/audio\/wav/);
      const json = await failure(patient.synthesize(req, signal()));
      expect(json.message).to.match(/application\/json/);
      for (const e of [timeout, truncated, wav, json]) expect(e.retryable).to.equal(true);
      // and the next answer is fine again
      expect(parseFrames(await patient.synthesize(req, signal())).length).to.be.greaterThan(10);
    });

    it("hands the body to onData piece by piece as it streams in, and nothing of an answer that is not MP3", async () => {
      const req = { text: "A sentence long enough to give a few dozen frames of audio.", voice: "echo", lang: "en-US" as const };
      const clip = await engine.synthesize({ text: req.text, voice: "echo", lang: "en-US" });
      const streaming = await startFakeProviders({ audio: () => clip, streamMs: () => 500, streamPieceBytes: 1000 });
      try {
        const p = createOpenAiProvider({ apiKey: OPENAI_KEY, baseUrl: streaming.openaiBaseUrl });
        const seen: { bytes: Buffer; at: number }[] = [];
        const mp3 = await p.synthesize(req, signal(), (bytes) => seen.push({ bytes: Buffer.from(bytes), at: performance.now() }));
        const done = performance.now();
        expect(seen.length).to.be.greaterThan(3);
        expect(Buffer.concat(seen.map((s) => s.bytes)).equals(mp3)).to.equal(true);
        expect(mp3.equals(clip)).to.equal(true);
        // The first piece came while the rest was still on its way.
        expect(seen[0].at).to.be.lessThan(done - 250);
      } finally {
        await streaming.close();
      }
      for (const fault of [{ kind: "wav" }, { kind: "json200" }, { kind: "status", status: 500 }] as const) {
        fake.failNext("openai", fault);
        const got: Uint8Array[] = [];
        await failure(openai().synthesize(req, signal(), (b) => got.push(b)));
        expect(got, fault.kind).to.have.length(0);
      }
    });
  });

  describe("Azure", () => {
    it("posts well-formed SSML with voice and xml:lang, escaped text and the MP3 output format", async () => {
      const text = `Tom & Jerry <sagen> "Hallo" – it's 5 > 3`;
      const mp3 = await azure().synthesize({ text, voice: "de-DE-KatjaNeural", lang: "de-DE" }, signal());
      expect(parseFrames(mp3).length).to.be.greaterThan(10);
      const [call] = fake.callsTo("azure");
      expect(call.violation).to.equal(undefined);
      expect(call.method).to.equal("POST");
      expect(call.path).to.equal("/cognitiveservices/v1");
      expect(call.headers["ocp-apim-subscription-key"]).to.equal(AZURE_KEY);
      expect(call.headers["content-type"]).to.equal("application/ssml+xml");
      expect(call.headers["x-microsoft-outputformat"]).to.equal(AZURE_OUTPUT_FORMAT);
      expect(call.headers["user-agent"]).to.be.a("string").and.not.equal("");
      expect(call.ssml).to.deep.equal({ lang: "de-DE", voice: "de-DE-KatjaNeural", text });
    });

    it("uses the regional endpoint when only a region is configured", () => {
      expect(() => createAzureProvider({ key: AZURE_KEY })).to.throw(/region/);
      expect(() => createAzureProvider({ key: AZURE_KEY, region: "west europe/../x" })).to.throw(/region/);
      expect(createAzureProvider({ key: AZURE_KEY, region: "westeurope" }).name).to.equal("azure");
    });

    it("keeps requests within its limit and classifies a bad key as permanent", async () => {
      const err = await azure().synthesize({ text: "a ".repeat(1501), voice: "de-DE-KatjaNeural", lang: "de-DE" }, signal()).catch((e: Error) => e);
      expect((err as Error).message).to.match(/3000/);
      const bad = await failure(azure({ key: "wrong-azure-key-000000000" }).synthesize({ text: "Hallo.", voice: "de-DE-KatjaNeural", lang: "de-DE" }, signal()));
      expect(bad.retryable).to.equal(false);
      expect(bad.message).not.to.include("wrong-azure-key");
      fake.failNext("azure", { kind: "status", status: 503, retryAfter: "1" });
      const busy = await failure(azure().synthesize({ text: "Hallo.", voice: "de-DE-KatjaNeural", lang: "de-DE" }, signal()));
      expect(busy.retryable).to.equal(true);
      expect(busy.retryAfterMs).to.equal(1000);
    });
  });

  describe("local", () => {
    it("wraps the engine; bad input is a permanent error", async () => {
      const p = localProvider(engine);
      expect(parseFrames(await p.synthesize({ text: "Short test.", voice: "alloy", lang: "en-US" }, signal())).length).to.be.greaterThan(5);
      const e = await failure(p.synthesize({ text: "   ", voice: "alloy", lang: "en-US" }, signal()));
      expect(e.retryable).to.equal(false);
      expect(p.label).to.equal(engine.name);
    });
  });

  describe("routing", () => {
    const stub = (name: "openai" | "azure"): SpeechProvider => ({ name, maxChars: 100, usesPrompt: false, model: () => "m", synthesize: async () => Buffer.alloc(0) });

    it("uses a voice's own provider only when its credentials are configured, else local", () => {
      const local = localProvider(engine);
      const none = createSpeechRouter({ providers: { local } });
      expect(none.chain("nova", "en-US").map((s) => `${s.provider.name}:${s.voice}`)).to.deep.equal(["local:nova"]);

      const both = createSpeechRouter({ providers: { local, openai: stub("openai"), azure: stub("azure") } });
      expect(both.chain("nova", "de-DE").map((s) => `${s.provider.name}:${s.voice}`)).to.deep.equal(["openai:nova", "azure:de-DE-KatjaNeural", "local:nova"]);
      expect(both.chain("de-DE-ConradNeural", "de-DE").map((s) => `${s.provider.name}:${s.voice}`)).to.deep.equal([
        "azure:de-DE-ConradNeural",
        "openai:onyx",
        "local:de-DE-ConradNeural",
      ]);
      const noLocal = createSpeechRouter({ providers: { local, azure: stub("azure") }, fallback: ["azure"] });
      expect(noLocal.chain("echo", "en-US").map((s) => `${s.provider.name}:${s.voice}`)).to.deep.equal(["local:echo", "azure:en-US-GuyNeural"]);
    });

    it("maps voices to the same language and a similar character", () => {
      expect(["nova", "shimmer", "alloy"].map((v) => mapVoice(v, "de-DE", "azure"))).to.deep.equal(Array(3).fill("de-DE-KatjaNeural"));
      expect(["echo", "onyx", "fable"].map((v) => mapVoice(v, "de-DE", "azure"))).to.deep.equal(Array(3).fill("de-DE-ConradNeural"));
      expect(mapVoice("de-DE-KatjaNeural", "de-DE", "openai")).to.equal("nova");
      expect(mapVoice("de-DE-ConradNeural", "de-DE", "openai")).to.equal("onyx");
      expect(mapVoice("shimmer", "en-US", "local")).to.equal("shimmer");
    });

    it("backs off with full jitter in a growing window and honours Retry-After up to its cap", () => {
      const o = { baseMs: 100, maxMs: 1000, retryAfterCapMs: 5000 };
      expect(retryDelay(1, o, undefined, () => 0.999)).to.be.within(90, 100);
      expect(retryDelay(3, o, undefined, () => 0.999)).to.be.within(390, 400);
      expect(retryDelay(10, o, undefined, () => 0.999)).to.be.within(990, 1000);
      expect(retryDelay(3, o, undefined, () => 0)).to.equal(0);
      expect(retryDelay(1, o, 2000, () => 0.5)).to.equal(2000);
      expect(retryDelay(1, o, 60_000, () => 0.5)).to.equal(5000);
    });
  });
});
