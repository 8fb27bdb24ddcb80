// The articles service's side of takedowns and of the NATS-return re-publish,
// over real Connect with a stand-in auth, the directory blob store and a bus
// that can be switched down and "reconnected".
import { expect } from "chai";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { ArticlesService } from "../../gen/articles/v1/articles_pb.js";
import { AuthService } from "../../gen/auth/v1/auth_pb.js";
import { createFsBlobStore } from "../../lib/blob/fs.js";
import type { BlobStore } from "../../lib/blob/port.js";
import { logger } from "../../lib/log.js";
import { closeRpcClients, rpcClient } from "../../lib/rpc/client.js";
import type { RpcServer } from "../../lib/rpc/server.js";
import type { RunningService } from "../../lib/service.js";
import { startArticlesService } from "../../services/articles/app.js";
import { openEmbeddedArticleStore } from "../../services/articles/store/open.js";
import type { ArticleStore } from "../../services/articles/store/port.js";
import { audioKeys } from "../../lib/revision-files.js";
import type { TimedSegment } from "../../lib/segments.js";
import { storeTranscript } from "../../services/audio/transcript-files.js";
import { waitFor } from "../support/http.js";
import { startFakeAuth } from "../support/fake-auth.js";
import { recordingBus, type RecordingBus } from "../support/recording-bus.js";

const INTERNAL = "internal-token-for-tests-0123456789";

describe("articles service: audio takedown and re-publish after a bus outage", function () {
  this.timeout(30_000);
  let auth: RpcServer;
  let svc: RunningService;
  let store: ArticleStore;
  let blobs: BlobStore;
  let dir: string;
  let bus: RecordingBus & { reconnect(): void };
  let publisher: ReturnType<typeof rpcClient<typeof ArticlesService>>;
  let worker: ReturnType<typeof rpcClient<typeof ArticlesService>>;

  before(async () => {
    auth = await startFakeAuth({ "full-token": { projectId: "p", scope: "full" } });
    dir = await mkdtemp(path.join(tmpdir(), "articles-audio-"));
    blobs = createFsBlobStore(dir);
    store = await openEmbeddedArticleStore();
    const listeners: Array<() => void> = [];
    bus = Object.assign(recordingBus(), {
      onReconnect: (l: () => void) => void listeners.push(l),
      reconnect: () => listeners.forEach((l) => l()),
    });
    svc = await startArticlesService({
      store,
      bus,
      auth: rpcClient(AuthService, auth.url),
      internalToken: INTERNAL,
      audioBaseUrl: "https://cdn.example.test/audio",
      log: logger("articles-test"),
      reconcile: false,
      blobs,
      supersededGraceMs: 300,
    });
    publisher = rpcClient(ArticlesService, svc.url, { token: "full-token" });
    worker = rpcClient(ArticlesService, svc.url, { token: INTERNAL });
  });
  after(async () => {
    await svc?.close();
    await auth?.close();
    closeRpcClients();
    await store?.close();
    await rm(dir, { recursive: true, force: true });
  });

  const put = (key: string) => blobs.put(key, Buffer.from("mp3"), "audio/mpeg");
  const exists = async (key: string) => (await blobs.stat(key)) !== null;

  it("removes the files a worker stored for an article deleted while it was rendering", async () => {
    const { id } = await publisher.createArticle({ title: "Late", text: "Rendered after the delete." });
    expect((await worker.claimAudioJob({ articleId: id, revision: 1n })).stale).to.equal(false);
    await publisher.deleteArticle({ id });
    // The worker finishes anyway and stores its files before it learns the result is not wanted.
    await put(`${id}/1/full.mp3`);
    await put(`${id}/1/preview.mp3`);
    const done = await worker.completeAudioJob({ articleId: id, revision: 1n, audio: { key: `${id}/1/full.mp3`, duration: 1 }, audioPreview: { key: `${id}/1/preview.mp3`, duration: 1 } });
    expect(done.applied).to.equal(false);
    expect(await exists(`${id}/1/full.mp3`)).to.equal(false);
    expect(await exists(`${id}/1/preview.mp3`)).to.equal(false);
  });

  it("removes a superseded revision's files after the grace period, keeping the current ones", async () => {
    const { id } = await publisher.createArticle({ title: "Twice", text: "First words." });
    await worker.claimAudioJob({ articleId: id, revision: 1n });
    await put(`${id}/1/full.mp3`);
    await worker.completeAudioJob({ articleId: id, revision: 1n, audio: { key: `${id}/1/full.mp3`, duration: 1 } });
    await publisher.updateArticle({ target: { case: "id", value: id }, title: "Twice", text: "Second words." });
    await put(`${id}/2/full.mp3`);
    expect(await exists(`${id}/1/full.mp3`)).to.equal(true);
    await waitFor("revision 1 to go", async () => ((await exists(`${id}/1/full.mp3`)) ? undefined : true), 5_000, 50);
    expect(await exists(`${id}/2/full.mp3`)).to.equal(true);
  });

  it("links a revision's timed text while it is ready, and takes it down with the audio on supersession and delete", async () => {
    const segments: TimedSegment[] = [
      { kind: "title", text: "Texts", start: 0.2, end: 1, sentences: [{ text: "Texts", start: 0.2, end: 1 }] },
      { kind: "paragraph", text: "Part one", start: 1.5, end: 2, heading: 2, sentences: [{ text: "Part one", start: 1.5, end: 2 }] },
      { kind: "paragraph", text: "Words.", start: 2.5, end: 3, sentences: [{ text: "Words.", start: 2.5, end: 3 }] },
    ];
    const render = async (id: string, revision: bigint) => {
      const keys = audioKeys(id, revision);
      await put(keys.full);
      const transcript = await storeTranscript(blobs, keys, segments);
      expect((await worker.completeAudioJob({ articleId: id, revision, audio: { key: keys.full, duration: 3 }, transcript })).applied).to.equal(true);
      return keys;
    };
    const { id } = await publisher.createArticle({ title: "Texts", text: "Part one\n\nWords." });
    await worker.claimAudioJob({ articleId: id, revision: 1n });
    const one = await render(id, 1n);
    const files = (k: typeof one) => [k.full, k.segments, k.vtt, k.srt, k.chapters];
    for (const key of files(one)) expect(await exists(key), key).to.equal(true);
    const t = (await publisher.getArticle({ id })).article?.transcript;
    expect([t?.segments?.url, t?.vtt?.url, t?.srt?.url, t?.chapters?.url]).to.deep.equal([one.segments, one.vtt, one.srt, one.chapters].map((k) => `https://cdn.example.test/audio/${k}`));

    // Queued again: no transcript until the new revision's own render, and the old files go after the grace period.
    await publisher.updateArticle({ target: { case: "id", value: id }, title: "Texts", text: "Other words." });
    expect((await publisher.getArticle({ id })).article?.transcript).to.equal(undefined);
    await worker.claimAudioJob({ articleId: id, revision: 2n });
    const two = await render(id, 2n);
    await waitFor("revision 1's files to go", async () => ((await Promise.all(files(one).map(exists))).some(Boolean) ? undefined : true), 5_000, 50);
    for (const key of files(two)) expect(await exists(key), key).to.equal(true);

    await publisher.deleteArticle({ id });
    await waitFor("revision 2's files to go", async () => ((await Promise.all(files(two).map(exists))).some(Boolean) ? undefined : true), 5_000, 50);
    expect((await publisher.getArticle({ id })).article?.transcript).to.equal(undefined);
  });

  it("publishes the jobs that failed during an outage as soon as the bus reports it is back", async () => {
    bus.published.length = 0;
    bus.down = true;
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push((await publisher.createArticle({ title: `Outage ${i}`, text: "Words." })).id);
    expect(bus.published).to.deep.equal([]);
    bus.down = false;
    bus.reconnect();
    await waitFor("the jobs to be published", async () => (bus.published.length === 3 ? true : undefined), 5_000, 20);
    expect(bus.published.map((j) => j.articleId).sort()).to.deep.equal([...ids].sort());
    // Settled: a second reconnect publishes nothing again.
    bus.reconnect();
    await new Promise((r) => setTimeout(r, 100));
    expect(bus.published).to.have.length(3);
  });
});
