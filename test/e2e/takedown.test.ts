// Delete means gone: after DELETE an article's audio URLs answer 404 within
// seconds, on the embedded default (audio in a directory) and on the full
// stack (GridFS); a superseded revision's files go after the grace period,
// also when the service restarted in between.
import { expect } from "chai";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { startEmbedded, type Embedded } from "../../launch/embedded.js";
import { api, waitFor } from "../support/http.js";
import { requireMongo, requireNats } from "../support/servers.js";
import { startTestStack, TOKENS as STACK_TOKENS, withMongo, type TestStack } from "./stack-harness.js";
import { sink } from "../support/sink.js";

type Call = ReturnType<typeof api>;

const GRACE_MS = 3_000;
const RESTART_GRACE_MS = 12_000;
const local = (u: string) => u.replace("localhost", "127.0.0.1");
const statusOf = async (url: string) => (await fetch(local(url))).status;
/** The timed text stored beside a revision's full audio (docs/transcripts.md). */
const timedText = (audio: string) => ["segments.json", "transcript.vtt", "transcript.srt"].map((f) => audio.replace(/full\.mp3$/, f));
const statusesOf = (urls: string[]) => Promise.all(urls.map(statusOf));

/** Waits until every URL answers 404; any answer but 200 or 404 on the way fails. */
async function allGone(urls: string[], timeoutMs: number): Promise<void> {
  const odd: string[] = [];
  await waitFor("every file to be gone", async () => {
    const statuses = await statusesOf(urls);
    statuses.forEach((s, i) => s !== 200 && s !== 404 && odd.push(`${s} for ${urls[i]}`));
    return odd.length > 0 || statuses.every((s) => s === 404) ? true : undefined;
  }, timeoutMs, 50);
  expect(odd).to.deep.equal([]);
}

async function ready(call: Call, id: string, revisionAtLeast = 1) {
  return waitFor(`article ${id} ready`, async () => {
    const r = await call("GET", `/api/articles/${id}`);
    if (r.body?.article?.status === "errored") throw new Error(`errored: ${r.body.article.error}`);
    const a = r.body?.article;
    return a?.status === "ready" && a.audio && !a.audio.includes(`/${id}/${revisionAtLeast - 1}/`) ? a : undefined;
  }, 120_000, 150);
}

/** The same story on both storage backends. */
function takedownScenario(setup: () => { A: Call }) {
  it("keeps a superseded revision's audio for the grace period, then removes it", async () => {
    const { A } = setup();
    const created = await A("POST", "/api/articles", { title: "Harbour repairs", text: "The harbour wall will be repaired in spring. Work starts in March." });
    expect(created.status).to.equal(200);
    const id = created.body.id as string;
    const first = await ready(A, id);
    expect(await statusOf(first.audio)).to.equal(200);

    expect((await A("PUT", `/api/articles/${id}`, { title: "Harbour repairs", text: "The harbour wall repairs move to April. Boats may moor as usual." })).status).to.equal(200);
    const updatedAt = Date.now();
    // A listener who started the old revision can go on for now.
    expect(await statusOf(first.audio)).to.equal(200);
    const second = await ready(A, id, 2);
    expect(second.audio).to.not.equal(first.audio);
    // Every file of the old revision goes, its timed text with its audio (issue 23 part 1). The files
    // go one by one; meanwhile each answers 200 or 404, never an error.
    await allGone([first.audio, first.audio_preview, ...timedText(first.audio)], GRACE_MS + 15_000);
    expect(Date.now() - updatedAt).to.be.at.least(GRACE_MS - 200);
    expect(await statusOf(second.audio)).to.equal(200);
    expect(await statusesOf(timedText(second.audio))).to.deep.equal([200, 200, 200]);
  });

  it("removes every file of a deleted article before the delete answers; the article stays readable as deleted", async () => {
    const { A } = setup();
    const created = await A("POST", "/api/articles", { title: "Takedown", text: "This story must be taken down. It was published by mistake." });
    const id = created.body.id as string;
    const art = await ready(A, id);
    expect(await statusOf(art.audio)).to.equal(200);
    expect(await statusOf(art.audio_preview)).to.equal(200);
    const etag = (await fetch(local(art.audio))).headers.get("etag")!;
    expect(await statusesOf(timedText(art.audio))).to.deep.equal([200, 200, 200]);
    expect((await A("GET", `/api/articles/${id}/segments`)).status).to.equal(200);

    expect((await A("DELETE", `/api/articles/${id}`)).status).to.equal(200);
    // Gone by the time the DELETE answers: no grace period, no later sweep.
    const files = [art.audio, art.audio_preview, ...timedText(art.audio)];
    expect(await statusesOf(files)).to.deep.equal(files.map(() => 404));
    expect((await A("GET", `/api/articles/${id}/segments`)).status).to.equal(404);
    // A revalidating cache gets no 304 for the old validator either.
    expect((await fetch(local(art.audio), { headers: { "if-none-match": etag } })).status).to.equal(404);
    const after = await A("GET", `/api/articles/${id}`);
    expect(after.status).to.equal(200);
    expect(after.body.article.status).to.equal("deleted");
    // No link to a file that is gone.
    expect(after.body.article).to.not.have.any.keys("audio", "audio_preview");
  });
}

describe("Delete means gone (embedded default: audio files in a directory)", function () {
  this.timeout(180_000);
  let dataDir: string;
  let sys: Embedded | undefined;
  let A: Call;
  const seed = JSON.stringify([{ token: "takedown-full-0123456789", project: "alpha", scope: "full" }]);
  
  async function start(graceMs = GRACE_MS) {
    sys = await startEmbedded({ PORT: "0", HOST: "127.0.0.1", DATA_DIR: dataDir, SEED_TOKENS: seed, SUPERSEDED_AUDIO_GRACE_MS: String(graceMs), AUDIO_ENGINE: process.env.AUDIO_ENGINE }, sink());
    A = api(sys.url, "takedown-full-0123456789");
  }

  before(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), "e2e-takedown-"));
    await start();
  });
  after(async () => {
    await sys?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  takedownScenario(() => ({ A }));

  it("removes a superseded revision's files after a restart that interrupted the grace period", async () => {
    // A grace longer than a restart takes on a loaded machine: the files must still be there after it.
    await sys!.close();
    await start(RESTART_GRACE_MS);
    const created = await A("POST", "/api/articles", { title: "Restart", text: "The first revision of this story. It will be replaced soon." });
    const id = created.body.id as string;
    const first = await ready(A, id);
    // The first revision is superseded when the second is ready, after this: its files are due no sooner than this plus the grace.
    const replacedNoSoonerThan = Date.now();
    await A("PUT", `/api/articles/${id}`, { title: "Restart", text: "The second revision of this story. It replaces the first one." });
    await ready(A, id, 2);
    // Stopped before the grace is over: the timer that would have removed the files is gone with the process.
    await sys!.close();
    sys = undefined;
    await start(RESTART_GRACE_MS);
    // The restarted gateway listens on another free port.
    const oldAudio = `${sys!.url}${new URL(first.audio).pathname}`;
    const status = await statusOf(oldAudio);
    // Within the grace the files must still be there. A restart that took longer than the grace (a
    // starved machine: seen once in a whole run beside two busy programs) may rightly find them gone already.
    if (Date.now() < replacedNoSoonerThan + RESTART_GRACE_MS) expect(status).to.equal(200);
    else console.log(`      [takedown] the restart outlasted the ${RESTART_GRACE_MS / 1000} s grace; the old audio answered ${status}`);
    await waitFor("the superseded audio to go after the restart", async () => ((await statusOf(oldAudio)) === 404 ? true : undefined), RESTART_GRACE_MS + 15_000, 200);
  });
});

describe("Delete means gone (full stack: GridFS)", function () {
  this.timeout(240_000);
  let t: TestStack | undefined;
  let A: Call;

  before(async function () {
    const mongoUrl = await requireMongo(this);
    const natsUrl = await requireNats(this);
    t = await startTestStack({ mongoUrl, natsUrl, env: { SUPERSEDED_AUDIO_GRACE_MS: String(GRACE_MS), AUDIO_REPLICAS: "1" } });
    A = api(t.stack.url, STACK_TOKENS.aFull);
  });
  after(async () => {
    await t?.cleanup();
  });

  takedownScenario(() => ({ A }));

  it("removes a deleted article's files that a restarted articles service had not removed yet", async () => {
    const created = await A("POST", "/api/articles", { title: "Sweep", text: "This story is deleted while the service is down. Its audio must still go." });
    const id = created.body.id as string;
    const art = await ready(A, id);
    const articles = t!.stack.process("articles");
    // Deleted behind the service's back (as if it had crashed right after marking the article): only the start-up sweep can find the files.
    await withMongo(t!.mongoUrl, t!.db, (c) => c.db(t!.db).collection("articles").updateOne({ _id: id as never }, { $set: { status: "deleted" } }));
    expect(await statusOf(art.audio)).to.equal(200);
    await articles.restart();
    await waitFor("the sweep to remove the audio", async () => ((await statusOf(art.audio)) === 404 ? true : undefined), 15_000, 200);
  });
});
