// Behaviour every listening-statistics store must show.
import { expect } from "chai";
import type { StatsStore } from "../../services/articles/stats/store.js";

export function statsStoreContract(open: () => Promise<{ store: StatsStore; dispose(): Promise<void> }>): void {
  let store: StatsStore;
  let dispose: () => Promise<void>;

  beforeEach(async () => {
    ({ store, dispose } = await open());
  });
  afterEach(async () => dispose?.());

  it("adds figures per article and day, creating the day on first use", async () => {
    await store.add("p1", "a1", "2026-11-20", { impressions: 3, plays: 2, secondsListened: 12.5 });
    await store.add("p1", "a1", "2026-11-20", { plays: 1, completions: 1, secondsListened: 30 });
    await store.add("p1", "a1", "2026-11-21", { impressions: 1 });
    const r = await store.article("p1", "a1", "2026-11-01", "2026-11-30");
    expect(r.total).to.include({ impressions: 4, plays: 3, completions: 1, secondsListened: 42.5 });
    expect(r.days.map((d) => [d.day, d.figures.plays])).to.deep.equal([
      ["2026-11-20", 3],
      ["2026-11-21", 0],
    ]);
  });

  it("never counts concurrent increments twice or loses one", async () => {
    await Promise.all(Array.from({ length: 50 }, () => store.add("p1", "a1", "2026-11-20", { plays: 1 })));
    expect((await store.article("p1", "a1", "2026-11-20", "2026-11-20")).total.plays).to.equal(50);
  });

  it("keeps projects and the date range apart", async () => {
    await store.add("p1", "a1", "2026-11-20", { plays: 1 });
    await store.add("p2", "a1", "2026-11-20", { plays: 7 });
    await store.add("p1", "a2", "2026-11-25", { plays: 5 });
    await store.add("p1", "a3", "2026-10-01", { plays: 9 });
    const r = await store.project("p1", "2026-11-01", "2026-11-30");
    expect(r.total.plays).to.equal(6);
    expect(r.articles.map((a) => [a.articleId, a.figures.plays])).to.deep.equal([
      ["a2", 5],
      ["a1", 1],
    ]);
    expect((await store.article("p2", "a2", "2026-11-01", "2026-11-30")).total.plays).to.equal(0);
  });
}
