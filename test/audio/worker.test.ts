import { Readable } from "node:stream";
import { expect } from "chai";
import { ArticleStatus, ArticlesService } from "../../gen/articles/v1/articles_pb.js";
import { assertSafeKey, type BlobInfo, type BlobStore } from "../../lib/blob/port.js";
import { PermanentJobError, type AudioJob, type ConsumeOptions, type JobBus, type JobHandler } from "../../lib/bus/port.js";
import { logger } from "../../lib/log.js";
import { closeRpcClients, rpcClient } from "../../lib/rpc/client.js";
import type { RpcServer } from "../../lib/rpc/server.js";
import { LOCAL_FORMAT, type SpeechEngine, type SpeechRequest } from "../../services/audio/engine/types.js";
import { mp3Duration, parseFrames, silenceFrames } from "../../services/audio/mp3/index.js";
import { createSpeechRouter, localProvider, type SpeechRouter } from "../../services/audio/providers/index.js";
import { startAudioWorker, type AudioWorker } from "../../services/audio/worker.js";
import { parseSrtStrict, parseWebVttStrict } from "../support/captions.js";
import { startFakeArticles, type FakeArticle } from "../support/fake-articles.js";

const INTERNAL = "internal-test-token-0123456789";
const log = logger("audio-worker-test");

/** Valid MP3 whose length follows the text (60 ms per character), so durations are predictable. */
function fakeEngine(opts: { fail?: Error; delayMs?: number } = {}): SpeechEngine & { calls: SpeechRequest[] } {
  const calls: SpeechRequest[] = [];
  return {
    name: "fake",
    format: LOCAL_FORMAT,
    calls,
    async synthesize(req, signal) {
      calls.push(req);
      if (opts.delayMs) await new Promise((r) => setTimeout(r, opts.delayMs));
      signal?.throwIfAborted();
      if (opts.fail) throw opts.fail;
      return silenceFrames(LOCAL_FORMAT, req.text.length * 60);
    },
    async silence(ms) {
      return silenceFrames(LOCAL_FORMAT, ms);
    },
    async close() {},
  };
}

function memoryBlobs(): BlobStore & { files: Map<string, { data: Buffer; contentType: string }> } {
  const files = new Map<string, { data: Buffer; contentType: string }>();
  const info = (f: { data: Buffer; contentType: string }): BlobInfo => ({ size: f.data.length, etag: `"${f.data.length}"`, contentType: f.contentType, modified: new Date() });
  return {
    files,
    async put(key, data, contentType) {
      assertSafeKey(key);
      files.set(key, { data, contentType });
      return info(files.get(key)!);
    },
    async stat(key) {
      const f = files.get(key);
      return f ? info(f) : null;
    },
    async read(key) {
      return Readable.from([files.get(key)!.data]);
    },
    async deletePrefix(prefix) {
      for (const k of [...files.keys()]) if (k.startsWith(prefix)) files.delete(k);
    },
    async close() {},
  };
}

/** Delivers each job synchronously through every attempt, without backoff. */
class TestBus implements JobBus {
  handler?: JobHandler;
  opts?: ConsumeOptions;
  working = 0;
  drained = false;
  async publish(): Promise<void> {
    throw new Error("not used: tests call deliver()");
  }
  async consume(handler: JobHandler, opts: ConsumeOptions) {
    this.handler = handler;
    this.opts = opts;
    return { drain: async () => void (this.drained = true) };
  }
  async deliver(job: AudioJob): Promise<"acked" | "dropped" | "exhausted"> {
    const opts = this.opts!;
    for (let attempt = 1; ; attempt++) {
      try {
        await this.handler!({ job, attempt, working: () => void this.working++ });
        return "acked";
      } catch (e) {
        if (e instanceof PermanentJobError) return "dropped";
        if (attempt >= opts.maxAttempts) {
          await opts.onExhausted(job, e, attempt);
          return "exhausted";
        }
      }
    }
  }
  async publishEvent() {}
  async close() {}
}

const paragraph = (n: number) =>
  Array.from({ length: n }, (_, i) => `Sentence number ${i + 1} tells the reader something new about the city budget.`).join(" ");

describe("audio worker", () => {
  let server: RpcServer;
  let articles: Map<string, FakeArticle>;
  let worker: AudioWorker | undefined;

  const add = (a: Partial<FakeArticle> & { id: string }): FakeArticle => {
    const full: FakeArticle = { revision: 1, title: "Budget news", text: paragraph(3), status: ArticleStatus.WAITING, errors: [], statuses: [], ...a };
    articles.set(a.id, full);
    return full;
  };

  async function start(engine: SpeechEngine, extra: { maxAttempts?: number; keepAliveMs?: number; keepDueMs?: number; speech?: SpeechRouter } = {}) {
    const bus = new TestBus();
    const blobs = memoryBlobs();
    worker = await startAudioWorker({ bus, blobs, engine, log, articles: rpcClient(ArticlesService, server.url, { token: INTERNAL }), ...extra });
    return { bus, blobs };
  }

  beforeEach(async () => {
    articles = new Map();
    server = await startFakeArticles(articles, INTERNAL);
  });
  afterEach(async () => {
    await worker?.stop();
    worker = undefined;
    closeRpcClients();
    await server.close();
  });

  it("renders a claimed job, stores full and preview MP3 and completes it", async () => {
    const a = add({ id: "art1", revision: 3, text: `${paragraph(4)}\n\n${paragraph(4)}` });
    const engine = fakeEngine();
    const { bus, blobs } = await start(engine);

    expect(await bus.deliver({ articleId: "art1", projectId: "p1", revision: 3 })).to.equal("acked");

    expect(a.status).to.equal(ArticleStatus.READY);
    expect(a.audio!.key).to.equal("art1/3/full.mp3");
    expect(a.preview!.key).to.equal("art1/3/preview.mp3");
    expect(a.provider).to.equal("fake");
    const full = blobs.files.get("art1/3/full.mp3")!;
    const preview = blobs.files.get("art1/3/preview.mp3")!;
    expect(full.contentType).to.equal("audio/mpeg");
    expect(preview.contentType).to.equal("audio/mpeg");
    expect(parseFrames(full.data).length).to.be.greaterThan(100);
    // Durations reported to the article are the stored files' frame durations.
    expect(a.audio!.duration).to.be.closeTo(mp3Duration(full.data), 1e-6);
    expect(a.preview!.duration).to.be.closeTo(mp3Duration(preview.data), 1e-6);
    // ~640 spoken characters at 60 ms each: longer than the 30 s preview.
    expect(a.audio!.duration).to.be.greaterThan(35);
    expect(a.preview!.duration).to.be.within(25, 40);
    expect(engine.calls[0].text).to.equal("Budget news");
  });

  // Needs the pipeline's timed segments (RenderResult.segments, issue 23 part 1).
  it("stores the revision's timed text beside the MP3s before it completes the job, and says so", async () => {
    const a = add({ id: "art2", revision: 2, text: `${paragraph(2)}\n\n${paragraph(2)}` });
    const { bus, blobs } = await start(fakeEngine());
    const completedWith: string[][] = [];
    // What is stored at the moment the job completes: the files must already be there.
    const put = blobs.put.bind(blobs);
    blobs.put = async (key, data, type) => {
      if (a.status === ArticleStatus.READY) completedWith.push([key]);
      return put(key, data, type);
    };
    expect(await bus.deliver({ articleId: "art2", projectId: "p1", revision: 2 })).to.equal("acked");
    expect(completedWith).to.deep.equal([]);
    expect(a.transcript).to.deep.equal({ chapters: false });
    const segments = JSON.parse(blobs.files.get("art2/2/segments.json")!.data.toString());
    expect(segments.result).to.equal("ok");
    expect(segments.segments.map((s: { kind: string }) => s.kind)).to.deep.equal(["title", "paragraph", "paragraph"]);
    expect(blobs.files.get("art2/2/transcript.vtt")!.contentType).to.equal("text/vtt; charset=utf-8");
    expect(parseWebVttStrict(blobs.files.get("art2/2/transcript.vtt")!.data.toString())).to.have.length(5);
    expect(parseSrtStrict(blobs.files.get("art2/2/transcript.srt")!.data.toString())).to.have.length(5);
    expect(blobs.files.has("art2/2/chapters.json")).to.equal(false);
  });

  it("drops a stale job without rendering or storing anything", async () => {
    const a = add({ id: "art2", revision: 2 });
    const engine = fakeEngine();
    const { bus, blobs } = await start(engine);

    expect(await bus.deliver({ articleId: "art2", projectId: "p1", revision: 1 })).to.equal("acked");
    expect(engine.calls).to.have.length(0);
    expect(blobs.files.size).to.equal(0);
    expect(a.status).to.equal(ArticleStatus.WAITING);
  });

  it("reports retry on each failed attempt and fails the article when attempts run out", async () => {
    const a = add({ id: "art3" });
    const { bus, blobs } = await start(fakeEngine({ fail: new Error("synthesizer crashed") }), { maxAttempts: 3 });

    expect(await bus.deliver({ articleId: "art3", projectId: "p1", revision: 1 })).to.equal("exhausted");
    expect(a.statuses).to.deep.equal([ArticleStatus.RETRY, ArticleStatus.RETRY]);
    expect(a.status).to.equal(ArticleStatus.ERRORED);
    expect(a.errors.map((e) => e.error)).to.deep.equal(["synthesizer crashed", "synthesizer crashed", "synthesizer crashed"]);
    expect(blobs.files.size).to.equal(0);
  });

  it("fails at once, without retries, when the article has nothing to read", async () => {
    const a = add({ id: "art4", title: "", text: "<nav>Menu</nav><script>x()</script>", parse: true });
    const engine = fakeEngine();
    const { bus } = await start(engine);

    expect(await bus.deliver({ articleId: "art4", projectId: "p1", revision: 1 })).to.equal("acked");
    expect(a.status).to.equal(ArticleStatus.ERRORED);
    expect(a.errors.map((e) => e.error)).to.deep.equal(["The article has no readable text"]);
    expect(engine.calls).to.have.length(0);
  });

  it("keeps the job lease alive while rendering", async () => {
    add({ id: "art5", text: paragraph(6) });
    const { bus } = await start(fakeEngine({ delayMs: 40 }), { keepAliveMs: 10 });
    expect(await bus.deliver({ articleId: "art5", projectId: "p1", revision: 1 })).to.equal("acked");
    expect(bus.working).to.be.greaterThan(2);
  });

  it("tells the articles service a long render is still in hand, without a status of its own", async () => {
    // Without it the reconciler takes a render longer than its stale time for a lost job and queues
    // the revision again: a second render beside the first, on the same engine.
    const a = add({ id: "art-long", text: paragraph(6) });
    const { bus } = await start(fakeEngine({ delayMs: 40 }), { keepAliveMs: 10, keepDueMs: 30 });
    expect(await bus.deliver({ articleId: "art-long", projectId: "p1", revision: 1 })).to.equal("acked");
    expect(a.keptDue ?? 0).to.be.greaterThan(1);
    expect(a.statuses, "no status reported for it").to.not.include(ArticleStatus.UNSPECIFIED);
    await worker!.stop();
    const short = add({ id: "art-short", text: "Short." });
    const other = await start(fakeEngine(), { keepAliveMs: 10 });
    expect(await other.bus.deliver({ articleId: "art-short", projectId: "p1", revision: 1 })).to.equal("acked");
    expect(short.keptDue ?? 0, "a render shorter than the default interval sends none").to.equal(0);
  });

  it("stop() drains the subscription", async () => {
    const { bus } = await start(fakeEngine());
    await worker!.stop();
    expect(bus.drained).to.equal(true);
  });

  it("reads the article with the pronunciation rules that came with the claim", async () => {
    add({ id: "art-rules", title: "BASF news", text: "Nguyen spoke for BASF.", pronunciations: [{ match: "Nguyen", say: "Win" }, { match: "BASF", spell: true }] });
    const engine = fakeEngine();
    const { bus } = await start(engine);
    expect(await bus.deliver({ articleId: "art-rules", projectId: "p1", revision: 1 })).to.equal("acked");
    expect(engine.calls.map((c) => c.text)).to.deep.equal(["B A S F news", "Win spoke for B A S F."]);
  });

  it("levels to the project's loudness target that came with the claim, the deployment's where the project sets none", async () => {
    add({ id: "loud", text: "Loud.", loudness: { lufs: -16, truePeakDbtp: -1.5 } });
    add({ id: "half", text: "Half.", loudness: { lufs: -16 } });
    add({ id: "plain", text: "Plain." });
    const levels = async (router?: (engine: SpeechEngine) => SpeechRouter) => {
      const engine = fakeEngine();
      const { bus } = await start(engine, { speech: router?.(engine) });
      const got: Record<string, unknown> = {};
      for (const id of ["loud", "half", "plain"]) {
        engine.calls.length = 0;
        const a = articles.get(id)!;
        a.revision++;
        expect(await bus.deliver({ articleId: id, projectId: "p1", revision: a.revision })).to.equal("acked");
        got[id] = engine.calls[0].level;
      }
      await worker!.stop();
      return got;
    };
    // Without providers the engine renders directly, against the built-in default.
    expect(await levels()).to.deep.equal({ loud: { lufs: -16, truePeak: -1.5 }, half: { lufs: -16, truePeak: -1 }, plain: { lufs: -19, truePeak: -1 } });
    // Through the provider router, whose target is the deployment's (AUDIO_LOUDNESS_LUFS, AUDIO_TRUE_PEAK_DBTP).
    const router = (engine: SpeechEngine) => createSpeechRouter({ providers: { local: localProvider(engine) }, fallback: [], loudness: { lufs: -21, truePeak: -2 } });
    expect(await levels(router)).to.deep.equal({ loud: { lufs: -16, truePeak: -1.5 }, half: { lufs: -16, truePeak: -2 }, plain: { lufs: -21, truePeak: -2 } });
  });
});
