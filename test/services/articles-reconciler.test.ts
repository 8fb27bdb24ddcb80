// The reconciler: a lost publish or a crashed worker must never leave an
// article waiting forever.
import { expect } from "chai";
import type { AudioJob } from "../../lib/bus/port.js";
import { AuthService } from "../../gen/auth/v1/auth_pb.js";
import { logger } from "../../lib/log.js";
import { closeRpcClients, rpcClient } from "../../lib/rpc/client.js";
import { startArticlesService } from "../../services/articles/app.js";
import { startReconciler, type Reconciler } from "../../services/articles/reconciler.js";
import { openEmbeddedArticleStore } from "../../services/articles/store/open.js";
import type { ArticleStore, NewArticle } from "../../services/articles/store/port.js";
import { recordingBus, type RecordingBus } from "../support/recording-bus.js";

const log = logger("reconciler-test");
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const draft = (id: string): NewArticle => ({ id, projectId: "p", title: "t", text: "x", isRaw: false, parse: false, voice: "alloy", lang: "en-US", labels: [] });
const ids = (jobs: AudioJob[]) => [...new Set(jobs.map((j) => j.articleId))].sort();

describe("articles reconciler", () => {
  let store: ArticleStore;
  let bus: RecordingBus;
  let rec: Reconciler | undefined;
  const longAgo = () => new Date(Date.now() - 10 * 60_000);

  beforeEach(async () => {
    store = await openEmbeddedArticleStore();
    bus = recordingBus();
  });
  afterEach(async () => {
    await rec?.stop();
    rec = undefined;
    await store.close();
  });

  it("re-publishes every pending article at start, whatever its age, and nothing finished or deleted", async () => {
    await store.insert(draft("waiting-fresh"));
    await store.insert(draft("processing"), longAgo());
    await store.claim("processing", 1, longAgo());
    await store.insert(draft("retrying"));
    await store.reportStatus("retrying", 1, "retry", "boom");
    await store.insert(draft("fallback"));
    await store.reportStatus("fallback", 1, "fallback");
    await store.insert(draft("ready"));
    await store.complete("ready", 1, { audio: { key: "k", duration: 1 } });
    await store.insert(draft("errored"));
    await store.fail("errored", 1, "x");
    await store.insert(draft("deleted"));
    await store.markDeleted("p", "deleted");
    await store.insert(draft("updated"));
    await store.update("p", "updated", 1, { title: "v2" });

    rec = startReconciler({ store, bus, log, intervalMs: 60_000 });
    expect(await rec.initialRun).to.equal(5);
    expect(ids(bus.published)).to.deep.equal(["fallback", "processing", "retrying", "updated", "waiting-fresh"]);
    expect(bus.published.find((j) => j.articleId === "updated")).to.deep.equal({ articleId: "updated", projectId: "p", revision: 2 });
  });

  it("hands an article whose page was never read back to the page fetches, never to the bus; an errored one no more", async () => {
    await store.insert({ ...draft("from-url"), text: "", url: "https://example.com/a", pageFetch: "pending" }, longAgo());
    await store.insert({ ...draft("gone"), text: "", url: "https://example.com/b", pageFetch: "pending" }, longAgo());
    await store.pageFetchFailed("gone", 1, "the page answered 404 Not Found");
    const fetched: string[] = [];
    rec = startReconciler({ store, bus, log, intervalMs: 60_000, admit: async () => undefined, fetchPage: (a) => void fetched.push(a.id) });
    await rec.initialRun;
    expect(fetched).to.deep.equal(["from-url"]);
    expect(bus.published).to.deep.equal([]);
    // Stale only once unchanged for the stale period: a fresh cut-off leaves it be.
    await rec.runOnce(Date.now() - 60 * 60_000);
    expect(fetched).to.deep.equal(["from-url"]);
    // Without page fetches (an older caller) it is still never published: it has no text to read.
    await rec.stop();
    rec = startReconciler({ store, bus, log, intervalMs: 60_000 });
    await rec.initialRun;
    expect(bus.published).to.deep.equal([]);
  });

  it("leaves parked (audio on demand) articles alone, at start and on every pass, until they are asked for", async () => {
    await store.insert({ ...draft("parked"), admission: "pending", parked: true }, longAgo());
    await store.insert({ ...draft("pending"), admission: "pending" }, longAgo());
    const admitted: string[] = [];
    rec = startReconciler({ store, bus, log, intervalMs: 60_000, admit: async (a) => void admitted.push(a.id) });
    await rec.initialRun;
    expect(await rec.runOnce(Date.now() + 1)).to.equal(0);
    expect(admitted).to.deep.equal(["pending", "pending"]);
    expect(bus.published).to.deep.equal([]);
    await store.unpark("p", "parked", Date.now() - 1);
    await rec.runOnce(Date.now() + 1);
    expect(admitted).to.include("parked");
  });

  it("re-publishes an article someone asked for (audio on demand) at the front of its project's lane, as the first publish did", async () => {
    await store.insert({ ...draft("asked-for"), admission: "pending", parked: true }, longAgo());
    await store.unpark("p", "asked-for", Date.now() - 1);
    await store.insert(draft("plain"), longAgo());
    rec = startReconciler({ store, bus, log, intervalMs: 60_000 });
    expect(await rec.initialRun).to.equal(2);
    expect(bus.published.find((j) => j.articleId === "asked-for")).to.deep.equal({ articleId: "asked-for", projectId: "p", revision: 1, priority: true });
    expect(bus.published.find((j) => j.articleId === "plain")).to.deep.equal({ articleId: "plain", projectId: "p", revision: 1 });
  });

  it("then periodically re-publishes only articles unchanged for longer than staleMs", async () => {
    await store.insert(draft("stuck"), longAgo());
    rec = startReconciler({ store, bus, log, intervalMs: 40, staleMs: 60_000 });
    await rec.initialRun;
    await store.insert(draft("fresh"));
    bus.published.length = 0;
    await sleep(200);
    expect(ids(bus.published)).to.deep.equal(["stuck"]);
    await rec.stop();
    const after = bus.published.length;
    await sleep(120);
    expect(bus.published.length).to.equal(after);
  });

  it("survives an unreachable bus and catches up once it is back", async () => {
    await store.insert(draft("lost"), longAgo());
    bus.down = true;
    rec = startReconciler({ store, bus, log, intervalMs: 40, staleMs: 1_000 });
    expect(await rec.initialRun).to.equal(0);
    bus.down = false;
    await sleep(200);
    expect(ids(bus.published)).to.deep.equal(["lost"]);
  });

  it("pages through more pending articles than one batch", async () => {
    for (let i = 0; i < 7; i++) await store.insert(draft(`a${i}`));
    rec = startReconciler({ store, bus, log, intervalMs: 60_000, batchSize: 2 });
    expect(await rec.initialRun).to.equal(7);
    expect(ids(bus.published)).to.deep.equal(["a0", "a1", "a2", "a3", "a4", "a5", "a6"]);
  });

  it("runs inside the started service: an article whose publish was lost is queued when the service starts", async () => {
    // As if a previous process stored the article and died before publishing.
    await store.insert(draft("orphan"), longAgo());
    const svc = await startArticlesService({
      store,
      bus,
      // Never called: no publisher request is made here.
      auth: rpcClient(AuthService, "http://127.0.0.1:9"),
      internalToken: "internal-token-for-tests-0123456789",
      audioBaseUrl: "http://localhost/audio",
      log,
      reconcile: { intervalMs: 40, staleMs: 60_000 },
    });
    try {
      for (let i = 0; i < 50 && bus.published.length === 0; i++) await sleep(10);
      expect(bus.published[0]).to.deep.equal({ articleId: "orphan", projectId: "p", revision: 1 });
    } finally {
      await svc.close();
      closeRpcClients();
    }
    const after = bus.published.length;
    await sleep(120);
    expect(bus.published.length, "no publishes after close").to.equal(after);
  });
});
