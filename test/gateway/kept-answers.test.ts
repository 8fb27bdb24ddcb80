// Read answers kept until a write could change them (gateway/kept-answers.ts).
import { expect } from "chai";
import { createKeptAnswers, DEFAULT_KEPT_CHARS, ENTRY_OVERHEAD_CHARS } from "../../gateway/kept-answers.js";
import { collectedHeapBytes } from "./collected-heap.js";

describe("kept answers", () => {
  let changes = 0;
  let clock = 0;
  const kept = (maxChars?: number, maxEntryChars?: number) => createKeptAnswers(() => changes, { maxChars, maxEntryChars, maxAgeMs: 1_000, now: () => clock });
  beforeEach(() => {
    changes = 0;
    clock = 0;
  });

  it("reuses an answer until anything changes, then makes it again", async () => {
    const k = kept();
    let made = 0;
    const produce = async () => `answer ${++made}`;
    expect(await k.keep("a", produce)).to.equal("answer 1");
    expect(k.get("a")).to.equal("answer 1");
    expect(k.get("b")).to.equal(undefined);
    changes++;
    expect(k.get("a")).to.equal(undefined);
    expect(k.chars).to.equal(0);
    expect(await k.keep("a", produce)).to.equal("answer 2");
    expect(k.get("a")).to.equal("answer 2");
  });

  it("keeps no answer whose making overlapped a change: it may show the data before it", async () => {
    const k = kept();
    const answer = await k.keep("a", async () => {
      changes++; // a write lands while the answer is made
      return "maybe stale";
    });
    expect(answer).to.equal("maybe stale");
    expect(k.get("a")).to.equal(undefined);
    expect(await k.keep("a", async () => "fresh")).to.equal("fresh");
    expect(k.get("a")).to.equal("fresh");
  });

  it("keeps an answer made from one row through the insert of another row, and lets it go on any other write; other answers go on both", async () => {
    let rewrites = 0;
    const k = createKeptAnswers(() => changes, { maxAgeMs: 1_000, now: () => clock, rewrites: () => rewrites });
    await k.keep("by id", async () => "one row", true);
    await k.keep("list", async () => "many rows");
    changes++; // an insert
    expect(k.get("by id")).to.equal("one row");
    expect(k.get("list")).to.equal(undefined);
    await k.keep("list", async () => "many rows, again");
    expect(k.get("list")).to.equal("many rows, again");
    changes++;
    rewrites++; // an update
    expect(k.get("by id")).to.equal(undefined);
    expect(k.get("list")).to.equal(undefined);
    // A one-row answer whose making overlapped an update is not kept; one that overlapped an insert is.
    await k.keep("by id", async () => {
      changes++;
      rewrites++;
      return "maybe stale";
    }, true);
    expect(k.get("by id")).to.equal(undefined);
    await k.keep("by id", async () => {
      changes++;
      return "current";
    }, true);
    expect(k.get("by id")).to.equal("current");
  });

  it("lets an answer go after its age, changes or not", async () => {
    const k = kept();
    await k.keep("a", async () => "x");
    clock = 999;
    expect(k.get("a")).to.equal("x");
    clock = 1_000;
    expect(k.get("a")).to.equal(undefined);
  });

  it("holds at most its bound, the oldest leaving first, and never one answer over a 64th of it", async () => {
    const max = 64 * (ENTRY_OVERHEAD_CHARS + 200);
    const k = kept(max);
    for (let i = 0; i < 100; i++) await k.keep(`k${i}`, async () => "x".repeat(100));
    expect(k.chars).to.be.at.most(max);
    expect(k.get("k0")).to.equal(undefined);
    expect(k.get("k99")).to.equal("x".repeat(100));
    expect(await k.keep("big", async () => "y".repeat(201))).to.have.length(201);
    expect(k.get("big")).to.equal(undefined);
  });

  it("counts keys and each entry's overhead toward its bound, not the answers alone", async () => {
    const k = kept(10_000, 10_000);
    const key = (i: number) => `${i} ${"q".repeat(1_000)}`;
    for (let i = 0; i < 50; i++) await k.keep(key(i), async () => "x");
    expect(k.chars).to.be.at.most(10_000);
    expect(k.size).to.be.at.most(Math.floor(10_000 / (1_000 + ENTRY_OVERHEAD_CHARS)));
    expect(k.get(key(49))).to.equal("x");
    expect(k.get(key(0))).to.equal(undefined);
    // Many tiny answers are bounded by their count too.
    const tiny = kept(ENTRY_OVERHEAD_CHARS * 10, ENTRY_OVERHEAD_CHARS * 10);
    for (let i = 0; i < 100; i++) await tiny.keep(`${i}`, async () => "");
    expect(tiny.size).to.be.below(10);
  });

  it("lets the oldest go first after entries left from the middle and the ends", async () => {
    const k = kept(5 * (ENTRY_OVERHEAD_CHARS + 2), ENTRY_OVERHEAD_CHARS + 2);
    for (const key of ["a", "b", "c", "d", "e"]) await k.keep(key, async () => "x");
    // "c" is replaced (it becomes the newest), "a" expires and leaves when read.
    clock = 500;
    await k.keep("c", async () => "y");
    clock = 1_000;
    expect(k.get("a")).to.equal(undefined);
    clock = 999;
    await k.keep("f", async () => "x");
    await k.keep("g", async () => "x");
    // Full with b, d, e, c, f: g pushed out b, the oldest left.
    expect(k.get("b")).to.equal(undefined);
    for (const key of ["d", "e", "f", "g"]) expect(k.get(key), key).to.equal("x");
    expect(k.get("c")).to.equal("y");
    expect(k.size).to.equal(5);
  });

  it("holds no more heap than its bound after 20,000 answers under distinct 15 KB keys", async function () {
    this.timeout(120_000);
    const k = createKeptAnswers(() => changes);
    const answer = JSON.stringify({ result: "ok", article: { id: "a1", title: "T", text: "t".repeat(1_500) } });
    const filler = "q".repeat(15_000);
    const before = collectedHeapBytes();
    // Flat strings of their own, as a request's parsed URL is (a concatenation would share the filler).
    const keyOf = (i: number) => Buffer.from(`Bearer t http://h GET /api/articles/a1?${i}${filler}`, "latin1").toString("latin1");
    for (let i = 0; i < 20_000; i++) await k.keep(keyOf(i), async () => answer);
    const grown = collectedHeapBytes() - before;
    expect(k.chars).to.be.at.most(DEFAULT_KEPT_CHARS);
    // One-byte strings: a character is a byte; the entries' overhead is inside the bound (ENTRY_OVERHEAD_CHARS).
    expect(grown, `heap grew by ${(grown / 2 ** 20).toFixed(1)} MiB`).to.be.below(DEFAULT_KEPT_CHARS + 4 * 2 ** 20);
  });
});
