// The admission and recrawl writes of both article store adapters: leases,
// conditional finishes, deferred ordering, one-time refunds, recrawl states.
import { expect } from "chai";
import { randomBytes } from "node:crypto";
import { mongoDb } from "../../lib/mongo.js";
import { openMongoArticleStore, openEmbeddedArticleStore } from "../../services/articles/store/open.js";
import type { ArticleStore, NewArticle } from "../../services/articles/store/port.js";
import { requireMongo } from "../support/servers.js";

const P = "proj";
let n = 0;
const draft = (over: Partial<NewArticle> = {}): NewArticle => ({
  id: `a${++n}-${randomBytes(3).toString("hex")}`,
  projectId: P,
  title: "T",
  text: "Body.",
  isRaw: false,
  parse: false,
  voice: "alloy",
  lang: "en-US",
  labels: [],
  admission: "pending",
  ...over,
});

function admissionStoreContract(open: () => Promise<ArticleStore>) {
  let store: ArticleStore;
  beforeEach(async () => {
    store = await open();
  });
  afterEach(() => store.close());

  it("one admission lease per revision; a finished decision clears pending, a deferral keeps it", async () => {
    const a = await store.insert(draft());
    expect(a.admission).to.equal("pending");
    const [x, y] = await Promise.all([store.claimAdmission(a.id, 1, 60_000), store.claimAdmission(a.id, 1, 60_000)]);
    expect([x, y].filter(Boolean)).to.have.length(1);
    const deferred = await store.finishAdmission(a.id, 1, { status: "no_money", types: [], decision: { rule: "creditChars", detail: "d", at: "t" }, keepPending: true });
    expect(deferred).to.include({ status: "no_money", admission: "pending" });
    expect(deferred!.admittingUntil).to.equal(undefined);
    expect(await store.claimAdmission(a.id, 1, 60_000)).to.not.equal(null);
    const done = await store.finishAdmission(a.id, 1, { status: "parsed", types: [{ name: "news", score: 0.7 }], spokenText: "Clean.", reservedChars: 7, keepPending: false });
    expect(done).to.include({ status: "parsed", spokenText: "Clean.", reservedChars: 7 });
    expect(done!.admission).to.equal(undefined);
    expect(done!.decision).to.equal(undefined);
    expect(done!.types).to.deep.equal([{ name: "news", score: 0.7 }]);
    expect(await store.claimAdmission(a.id, 1, 60_000)).to.equal(null);
  });

  it("an expired lease can be taken over; a superseded revision cannot be finished", async () => {
    const a = await store.insert(draft());
    const t0 = new Date();
    expect(await store.claimAdmission(a.id, 1, 1_000, t0)).to.not.equal(null);
    expect(await store.claimAdmission(a.id, 1, 1_000, new Date(t0.getTime() + 500))).to.equal(null);
    expect(await store.claimAdmission(a.id, 1, 1_000, new Date(t0.getTime() + 2_000))).to.not.equal(null);
    const u = await store.update(P, a.id, 1, { text: "New.", admission: "pending" });
    expect(u.ok && u.article).to.include({ revision: 2, admission: "pending" });
    expect(await store.finishAdmission(a.id, 1, { status: "waiting", types: [], keepPending: false })).to.equal(null);
  });

  it("lists deferred articles oldest first, per project when asked; stale pending ones are flagged", async () => {
    const made = [];
    for (const [i, project] of [P, "other", P].entries()) {
      const a = await store.insert(draft({ projectId: project }), new Date(1_700_000_000_000 + i * 1000));
      await store.claimAdmission(a.id, 1, 60_000);
      await store.finishAdmission(a.id, 1, { status: i === 1 ? "no_money" : "limit_reached", types: [], keepPending: true });
      made.push(a.id);
    }
    expect((await store.findDeferred(undefined, 10)).map((d) => d.id)).to.deep.equal(made);
    expect((await store.findDeferred(P, 10)).map((d) => d.id)).to.deep.equal([made[0], made[2]]);
    const fresh = await store.insert(draft(), new Date(1_600_000_000_000));
    const stale = await store.findStale(["waiting"], Date.now());
    expect(stale.find((s) => s.id === fresh.id)).to.deep.equal({ id: fresh.id, projectId: P, revision: 1, pendingAdmission: true, key: 1_600_000_000_000 });
  });

  it("a reservation is taken back exactly once", async () => {
    const a = await store.insert(draft());
    await store.claimAdmission(a.id, 1, 60_000);
    await store.finishAdmission(a.id, 1, { status: "waiting", types: [], reservedChars: 40, keepPending: false });
    const takes = await Promise.all([store.takeReservation(a.id, 1, 40), store.takeReservation(a.id, 1, 40)]);
    expect(takes.filter(Boolean)).to.have.length(1);
    expect((await store.getById(a.id))?.reservedChars).to.equal(undefined);
  });

  it("recrawl: start remembers the status, end restores it, new content bumps the revision pending admission", async () => {
    const a = await store.insert(draft({ url: "https://example.com/a", admission: undefined }));
    await store.claim(a.id, 1);
    await store.complete(a.id, 1, { audio: { key: "k", duration: 1 } });
    const r = await store.startRecrawl(a.id, 1, "ready");
    expect(r).to.include({ status: "recrawling", recrawlFrom: "ready" });
    expect(await store.startRecrawl(a.id, 1, "ready")).to.equal(null);
    expect(await store.endRecrawl(a.id, 1)).to.include({ status: "ready" });
    expect((await store.getById(a.id))?.audio).to.deep.equal({ key: "k", duration: 1 });
    await store.startRecrawl(a.id, 1, "ready");
    const next = await store.recrawled(a.id, 1, "Fresh text.");
    expect(next).to.include({ status: "waiting", revision: 2, admission: "pending", crawledText: "Fresh text." });
    expect(next!.audio).to.equal(undefined);
    expect(next!.text).to.equal("Body.");
    const candidates = await store.findRecrawlCandidates(P, 0);
    expect(candidates.map((c) => c.id)).to.include(a.id);
    // A publisher update drops the crawled text.
    const u = await store.update(P, a.id, 2, { text: "Publisher text.", admission: "pending" });
    expect(u.ok && u.article.crawledText).to.equal(undefined);
  });
}

describe("ArticleStore admission writes: SQLite", () => admissionStoreContract(() => openEmbeddedArticleStore()));

describe("ArticleStore admission writes: MongoDB", function () {
  let url = "";
  const run = `adm_${Date.now().toString(36)}_${randomBytes(3).toString("hex")}`;
  let k = 0;
  before(async function () {
    url = await requireMongo(this);
  });
  admissionStoreContract(async () => openMongoArticleStore(await mongoDb(url, `${run}_${++k}`)));
});
