// Retry, fallback and fast failure as the articles service sees them: the real
// worker and router against the fake OpenAI/Azure APIs, statuses and errors
// recorded by an in-test articles service.
import { Readable } from "node:stream";
import { expect } from "chai";
import { ArticleStatus, ArticlesService } from "../../gen/articles/v1/articles_pb.js";
import { assertSafeKey, type BlobStore } from "../../lib/blob/port.js";
import { PermanentJobError, type AudioJob, type ConsumeOptions, type JobBus, type JobHandler } from "../../lib/bus/port.js";
import { logger } from "../../lib/log.js";
import { closeRpcClients, rpcClient } from "../../lib/rpc/client.js";
import type { RpcServer } from "../../lib/rpc/server.js";
import { createLocalEngine, type SpeechEngine } from "../../services/audio/engine/index.js";
import { mp3Duration, parseFrames } from "../../services/audio/mp3/index.js";
import { createAzureProvider, createOpenAiProvider, createSpeechRouter, localProvider, type SpeechRouterOptions } from "../../services/audio/providers/index.js";
import { startAudioWorker, type AudioWorker } from "../../services/audio/worker.js";
import { startFakeArticles, type FakeArticle } from "../support/fake-articles.js";
import { startFakeProviders, type FakeProviders } from "../support/fake-providers.js";

const INTERNAL = "internal-test-token-0123456789";
const OPENAI_KEY = "sk-test-openai-key-0123456789";
const AZURE_KEY = "azure-test-key-0123456789";
const log = logger("fallback-test");

class TestBus implements JobBus {
  handler?: JobHandler;
  opts?: ConsumeOptions;
  async publish(): Promise<void> {}
  async consume(handler: JobHandler, opts: ConsumeOptions) {
    this.handler = handler;
    this.opts = opts;
    return { drain: async () => undefined };
  }
  async deliver(job: AudioJob): Promise<"acked" | "dropped" | "exhausted"> {
    for (let attempt = 1; ; attempt++) {
      try {
        await this.handler!({ job, attempt, working: () => undefined });
        return "acked";
      } catch (e) {
        if (e instanceof PermanentJobError) return "dropped";
        if (attempt >= this.opts!.maxAttempts) {
          await this.opts!.onExhausted(job, e, attempt);
          return "exhausted";
        }
      }
    }
  }
  async publishEvent() {}
  async close() {}
}

function memoryBlobs(): BlobStore & { files: Map<string, Buffer> } {
  const files = new Map<string, Buffer>();
  const info = (d: Buffer) => ({ size: d.length, etag: `"${d.length}"`, contentType: "audio/mpeg", modified: new Date() });
  return {
    files,
    async put(key, data) {
      assertSafeKey(key);
      files.set(key, data);
      return info(data);
    },
    async stat(key) {
      return files.has(key) ? info(files.get(key)!) : null;
    },
    async read(key) {
      return Readable.from([files.get(key)!]);
    },
    async deletePrefix() {},
    async close() {},
  };
}

const S = ArticleStatus;

describe("provider retry and fallback, seen through the articles service", function () {
  // The fake renders its answers with the local engine below the test's priority: beside busy
  // programs one short answer can take longer than a minute, so only the tests about timeouts set one.
  this.timeout(600_000);
  let engine: SpeechEngine;
  let fake: FakeProviders;
  let server: RpcServer;
  let articles: Map<string, FakeArticle>;
  let worker: AudioWorker | undefined;
  const clips = new Map<string, Promise<Buffer>>();

  before(async () => {
    engine = await createLocalEngine({ threads: 2 });
  });
  after(async () => {
    await engine?.close();
  });
  beforeEach(async () => {
    articles = new Map();
    server = await startFakeArticles(articles, INTERNAL);
    fake = await startFakeProviders({ audio: clipOf });
  });
  /** The fake provider's audio for a text, rendered once by the local engine. */
  function clipOf(text: string, voice: string, provider: string): Promise<Buffer> {
    const local = provider === "azure" ? (/Katja|Jenny/.test(voice) ? "de-DE-KatjaNeural" : "de-DE-ConradNeural") : voice;
    const key = `${local}|${text}`;
    if (!clips.has(key)) clips.set(key, engine.synthesize({ text, voice: local, lang: provider === "azure" ? "de-DE" : "en-US" }));
    return clips.get(key)!;
  }
  afterEach(async () => {
    await worker?.stop();
    worker = undefined;
    closeRpcClients();
    await fake.close();
    await server.close();
  });

  async function run(article: Partial<FakeArticle>, router: Partial<SpeechRouterOptions> & { azure?: boolean; openai?: boolean; openaiKey?: string; timeoutMs?: number } = {}) {
    const a: FakeArticle = {
      id: "a1",
      revision: 1,
      title: "Council news",
      text: "The council met on Tuesday.\n\nIt approved the budget.",
      voice: "nova",
      lang: "en-US",
      status: S.WAITING,
      statuses: [],
      errors: [],
      ...article,
    };
    articles.set(a.id, a);
    const speech = createSpeechRouter({
      providers: {
        openai: router.openai === false ? undefined : createOpenAiProvider({ apiKey: router.openaiKey ?? OPENAI_KEY, baseUrl: fake.openaiBaseUrl, timeoutMs: router.timeoutMs ?? 300_000 }),
        azure: router.azure === false ? undefined : createAzureProvider({ key: AZURE_KEY, endpoint: fake.azureEndpoint, timeoutMs: router.timeoutMs ?? 300_000 }),
        local: localProvider(engine),
      },
      backoff: { baseMs: 20, maxMs: 100, retryAfterCapMs: 5_000 },
      ...router,
    });
    const bus = new TestBus();
    const blobs = memoryBlobs();
    worker = await startAudioWorker({ bus, blobs, engine, speech, log, maxAttempts: 5, articles: rpcClient(ArticlesService, server.url, { token: INTERNAL }) });
    const started = Date.now();
    const outcome = await bus.deliver({ articleId: a.id, projectId: "p1", revision: 1 });
    return { a, outcome, ms: Date.now() - started, blobs };
  }

  it("honours 429 Retry-After, shows retry, then completes with the voice's own provider", async () => {
    fake.failNext("openai", { kind: "status", status: 429, retryAfter: "1", message: "Rate limit reached for requests" });
    const { a, outcome, ms, blobs } = await run({}, { articleConcurrency: 1 });
    expect(outcome).to.equal("acked");
    expect(a.status).to.equal(S.READY);
    expect(a.provider).to.equal("openai");
    expect(a.statuses).to.deep.equal([S.RETRY]);
    expect(a.errors).to.have.length(1);
    expect(a.errors[0].error).to.match(/^openai: HTTP 429: Rate limit reached/);
    expect(new Date(a.errors[0].date).toISOString()).to.equal(a.errors[0].date);
    expect(ms).to.be.at.least(1000);
    const full = blobs.files.get(a.audio!.key)!;
    expect(a.audio!.duration).to.be.closeTo(mp3Duration(full), 1e-6);
    // title + two paragraphs, each asked for once after the throttled try
    expect(fake.callsTo("openai").filter((c) => !c.fault)).to.have.length(3);
    expect(fake.calls.every((c) => !c.violation)).to.equal(true);
  });

  it("retries 500, timeouts, truncated and wrong-format bodies, then falls back to Azure with a matching German voice", async () => {
    fake.failAlways("openai", { kind: "status", status: 500, message: "The server had an error" });
    fake.failNext("azure", { kind: "timeout" }, { kind: "truncate" });
    // The fake's good answers are ready before the clock starts: rendered during the 1.5 s timeout,
    // on a busy machine (the local engine runs below the test's priority), they would time out too.
    const parts = ["Neuigkeiten", "Der Rat tagte am Dienstag.", "Er beschloss den Haushalt."];
    await Promise.all(parts.map((t) => clipOf(t, "de-DE-KatjaNeural", "azure")));
    const rendered = clips.size;
    const { a, outcome } = await run({ lang: "de-DE", voice: "shimmer", title: "Neuigkeiten", text: "Der Rat tagte am Dienstag.\n\nEr beschloss den Haushalt." }, { articleConcurrency: 1, attempts: 3, timeoutMs: 1_500 });
    expect(outcome).to.equal("acked");
    expect(a.status).to.equal(S.READY);
    expect(a.provider).to.equal("azure");
    // OpenAI: two retries then fallback; Azure (the fallback) retries the timeout and the cut body while staying in fallback.
    expect(a.statuses).to.deep.equal([S.RETRY, S.RETRY, S.FALLBACK, S.FALLBACK, S.FALLBACK]);
    expect(a.errors.map((e) => e.error.replace(/:.*/s, ""))).to.deep.equal(["openai", "openai", "openai", "azure", "azure"]);
    expect(a.errors[3].error).to.match(/no complete answer within 1.5 s/);
    expect(a.errors[4].error).to.match(/cut off|truncated/);
    expect(fake.callsTo("openai")).to.have.length(3);
    const voices = new Set(fake.callsTo("azure").map((c) => `${c.ssml?.lang}/${c.ssml?.voice}`));
    expect([...voices]).to.deep.equal(["de-DE/de-DE-KatjaNeural"]);
    expect(clips.size, "Azure was asked only for the texts rendered beforehand").to.equal(rendered);
  });

  it("fails fast on a bad key (no retries) and falls back to the local engine", async () => {
    const revoked = "sk-revoked-key-000000000000";
    const { a } = await run({ voice: "echo", text: "The council met." }, { azure: false, articleConcurrency: 1, openaiKey: revoked });
    expect(a.status).to.equal(S.READY);
    expect(a.provider).to.equal(engine.name);
    expect(a.statuses).to.deep.equal([S.FALLBACK]);
    expect(a.errors).to.have.length(1);
    expect(a.errors[0].error).to.match(/^openai: HTTP 401/);
    expect(a.errors[0].error).not.to.include(revoked);
    // one request: the first chunk's 401 stops the article's other chunks from being sent
    expect(fake.callsTo("openai")).to.have.length(1);
  });

  it("errors the article with the last error when the whole chain fails, and stops there", async () => {
    fake.failAlways("openai", { kind: "wav" });
    fake.failAlways("azure", { kind: "status", status: 400, message: "voice is not available" });
    const { a, outcome } = await run({ lang: "de-DE", voice: "onyx", title: "Titel", text: "Ein Satz." }, { fallback: ["azure"], attempts: 2, articleConcurrency: 1 });
    expect(outcome).to.equal("acked");
    expect(a.status).to.equal(S.ERRORED);
    expect(a.statuses).to.deep.equal([S.RETRY, S.FALLBACK]);
    expect(a.error).to.equal("azure: HTTP 400: voice is not available");
    expect(a.errors.map((e) => e.error)).to.deep.equal([
      "openai: unexpected response type 'audio/wav' instead of MP3",
      "openai: unexpected response type 'audio/wav' instead of MP3",
      "azure: HTTP 400: voice is not available",
    ]);
    expect(fake.callsTo("openai")).to.have.length(2);
    expect(fake.callsTo("azure")).to.have.length(1);
  });

  it("bounds the chunks in flight per article", async function () {
    // The fake renders each answer with the local engine while the request waits (so requests
    // overlap), below the test's priority: beside busy programs 13 of them take minutes.
    this.timeout(600_000);
    const text = Array.from({ length: 12 }, (_, i) => `Paragraph ${i + 1} has its own short sentence.`).join("\n\n");
    const { a, blobs } = await run({ text }, { articleConcurrency: 3, azure: false, timeoutMs: 300_000 });
    expect(a.status).to.equal(S.READY);
    expect(fake.inFlight().max).to.equal(3);
    expect(a.errors, JSON.stringify(a.errors)).to.have.length(0);
    expect(fake.callsTo("openai").map((c) => c.json?.input)).to.have.length(13);
    expect(parseFrames(blobs.files.get(a.audio!.key)!).length).to.be.greaterThan(100);
  });
});
