// Behaviour every listening-statistics store must show.
import { expect } from "chai";
import type { StatsDoc, StatsStore } from "../../services/articles/stats/store.js";

/** Bounds roomy enough not to matter where a test is not about them. */
const ROOMY = { secondsPerPlay: 1_000_000 };

export interface StatsStoreUnderTest {
  store: StatsStore;
  /** Another store over the same data, as a second articles replica has. */
  another(): Promise<StatsStore>;
  /** Writes a document as an older version of the store did. */
  insertRaw(doc: StatsDoc): Promise<void>;
  dispose(): Promise<void>;
}

export function statsStoreContract(open: () => Promise<StatsStoreUnderTest>): void {
  let store: StatsStore;
  let another: () => Promise<StatsStore>;
  let insertRaw: (doc: StatsDoc) => Promise<void>;
  let dispose: () => Promise<void>;

  beforeEach(async () => {
    ({ store, another, insertRaw, dispose } = await open());
  });
  afterEach(async () => dispose?.());

  it("adds figures per article and day, creating the day on first use", async () => {
    await store.add("p1", "a1", "2026-11-20", { impressions: 3, plays: 2, secondsListened: 12.5 }, ROOMY);
    await store.add("p1", "a1", "2026-11-20", { plays: 1, completions: 1, secondsListened: 30 }, ROOMY);
    await store.add("p1", "a1", "2026-11-21", { impressions: 1 }, ROOMY);
    const r = await store.article("p1", "a1", "2026-11-01", "2026-11-30");
    expect(r.total).to.include({ impressions: 4, plays: 3, completions: 1, secondsListened: 42.5 });
    expect(r.days.map((d) => [d.day, d.figures.plays])).to.deep.equal([
      ["2026-11-20", 3],
      ["2026-11-21", 0],
    ]);
  });

  it("keeps each source's figures apart and adds them up in the totals; downloads need no play", async () => {
    const day = "2026-11-20";
    await store.add("p1", "a1", day, { plays: 2, secondsListened: 10 }, ROOMY);
    await store.add("p1", "a1", day, { plays: 1, completions: 1 }, ROOMY, "embed");
    await store.add("p1", "a1", day, { downloads: 3 }, ROOMY, "podcast");
    await store.add("p1", "a2", day, { downloads: 1 }, ROOMY, "podcast");
    const a = await store.article("p1", "a1", day, day);
    expect(a.total).to.include({ plays: 3, completions: 1, downloads: 3, secondsListened: 10 });
    expect(a.days[0].figures.downloads).to.equal(3);
    expect(a.bySource.map((s) => [s.source, s.figures.plays, s.figures.downloads])).to.deep.equal([
      ["player", 2, 0],
      ["embed", 1, 0],
      ["podcast", 0, 3],
    ]);
    const p = await store.project("p1", day, day);
    expect(p.total.downloads).to.equal(4);
    expect(p.articles.map((x) => [x.articleId, x.figures.plays, x.figures.downloads])).to.deep.equal([
      ["a1", 3, 3],
      ["a2", 0, 1],
    ]);
  });

  it("never counts concurrent increments twice or loses one", async () => {
    await Promise.all(Array.from({ length: 50 }, () => store.add("p1", "a1", "2026-11-20", { plays: 1 }, ROOMY)));
    expect((await store.article("p1", "a1", "2026-11-20", "2026-11-20")).total.plays).to.equal(50);
  });

  it("keeps projects and the date range apart", async () => {
    await store.add("p1", "a1", "2026-11-20", { plays: 1 }, ROOMY);
    await store.add("p2", "a1", "2026-11-20", { plays: 7 }, ROOMY);
    await store.add("p1", "a2", "2026-11-25", { plays: 5 }, ROOMY);
    await store.add("p1", "a3", "2026-10-01", { plays: 9 }, ROOMY);
    const r = await store.project("p1", "2026-11-01", "2026-11-30");
    expect(r.total.plays).to.equal(6);
    expect(r.articles.map((a) => [a.articleId, a.figures.plays])).to.deep.equal([
      ["a2", 5],
      ["a1", 1],
    ]);
    expect((await store.article("p2", "a2", "2026-11-01", "2026-11-30")).total.plays).to.equal(0);
  });

  it("never counts completions, quartiles or listening time beyond what the day's plays allow", async () => {
    const day = "2026-11-20";
    const total = async () => (await store.article("p1", "a1", day, day)).total;
    const short = { secondsPerPlay: 56 }; // a 28-second article at 2×
    // Completions and quartiles without any play, listening without a play: nothing.
    await store.add("p1", "a1", day, { completions: 11_500, progress25: 40, progress75: 3, secondsListened: 600 }, short);
    expect(await total()).to.include({ plays: 0, completions: 0, progress25: 0, progress75: 0, secondsListened: 0 });
    // Two plays carry at most two completions and 2 × 56 s.
    await store.add("p1", "a1", day, { impressions: 1, plays: 2, completions: 9, progress50: 9, secondsListened: 6_900_000 }, short);
    expect(await total()).to.include({ impressions: 1, plays: 2, completions: 2, progress50: 2, secondsListened: 112 });
    await store.add("p1", "a1", day, { completions: 1, secondsListened: 1 }, short);
    expect(await total()).to.include({ completions: 2, secondsListened: 112 });
    // The next play makes room for one more of each.
    await store.add("p1", "a1", day, { plays: 1, completions: 1, progress25: 1, secondsListened: 20 }, short);
    expect(await total()).to.include({ plays: 3, completions: 3, progress25: 1, secondsListened: 132 });
    // Another day starts from nothing.
    await store.add("p1", "a1", "2026-11-21", { completions: 1 }, short);
    expect((await store.article("p1", "a1", "2026-11-21", "2026-11-21")).total.completions).to.equal(0);
  });

  it("holds the bounds when two replicas write the same day at once, and loses no play", async () => {
    const day = "2026-11-20";
    const second = await another();
    const bounds = { secondsPerPlay: 28 };
    await store.add("p1", "a1", day, { plays: 10 }, bounds);
    // 2 × 30 forged completions racing each other, each batch also claiming 10 s.
    await Promise.all(Array.from({ length: 60 }, (_, i) => (i % 2 ? store : second).add("p1", "a1", day, { completions: 1, secondsListened: 10 }, bounds)));
    let t = (await store.article("p1", "a1", day, day)).total;
    expect(t).to.include({ plays: 10, completions: 10, secondsListened: 280 });
    // Concurrent real plays from both replicas all count.
    await Promise.all(Array.from({ length: 40 }, (_, i) => (i % 2 ? store : second).add("p1", "a1", day, { plays: 1, completions: 1 }, bounds)));
    t = (await second.article("p1", "a1", day, day)).total;
    expect(t).to.include({ plays: 50, completions: 50 });
  });

  it("adds to a day written before the bounds existed without lowering what it holds", async () => {
    const day = "2026-11-20";
    await insertRaw({ _id: `p1|a1|${day}`, projectId: "p1", articleId: "a1", day, plays: 2, completions: 500, secondsListened: 90_000 });
    await store.add("p1", "a1", day, { plays: 1, completions: 1, impressions: 1 }, { secondsPerPlay: 56 });
    expect((await store.article("p1", "a1", day, day)).total).to.include({ impressions: 1, plays: 3, completions: 500, secondsListened: 90_000 });
  });
}
