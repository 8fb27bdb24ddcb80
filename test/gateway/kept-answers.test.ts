// Read answers kept until a write could change them (gateway/kept-answers.ts).
import { expect } from "chai";
import { createKeptAnswers } from "../../gateway/kept-answers.js";

describe("kept answers", () => {
  let changes = 0;
  let clock = 0;
  const kept = (maxChars?: number) => createKeptAnswers(() => changes, { maxChars, maxAgeMs: 1_000, now: () => clock });
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

  it("lets an answer go after its age, changes or not", async () => {
    const k = kept();
    await k.keep("a", async () => "x");
    clock = 999;
    expect(k.get("a")).to.equal("x");
    clock = 1_000;
    expect(k.get("a")).to.equal(undefined);
  });

  it("holds at most its bound, the oldest leaving first, and never one answer over a 64th of it", async () => {
    const k = kept(6_400);
    for (let i = 0; i < 100; i++) await k.keep(`k${i}`, async () => "x".repeat(100));
    expect(k.chars).to.be.at.most(6_400);
    expect(k.get("k0")).to.equal(undefined);
    expect(k.get("k99")).to.equal("x".repeat(100));
    expect(await k.keep("big", async () => "y".repeat(101))).to.have.length(101);
    expect(k.get("big")).to.equal(undefined);
  });
});
