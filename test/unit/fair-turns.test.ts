// lib/fair-turns.ts: synchronous steps (a create's language detection) take turns by project, in
// slices with the event loop served between them, so one project's many steps never run as one
// long stretch ahead of another project's single step.
import { expect } from "chai";
import { fairTurns } from "../../lib/fair-turns.js";

const busy = (ms: number) => {
  const until = performance.now() + ms;
  while (performance.now() < until);
};

describe("fair turns on the event loop", () => {
  it("a step asked for while nothing waits runs at once, and its value and error come back", async () => {
    const turn = fairTurns();
    let ran = false;
    const p = turn("a", () => {
      ran = true;
      return 42;
    });
    expect(ran).to.equal(true);
    expect(await p).to.equal(42);
    await new Promise((r) => setImmediate(r));
    const failing = turn("a", () => {
      throw new Error("no");
    });
    let error: unknown;
    await failing.catch((e) => (error = e));
    expect((error as Error).message).to.equal("no");
  });

  it("another project's step goes before the rest of a project's backlog, and the event loop turns between slices", async () => {
    const turn = fairTurns(4);
    const order: string[] = [];
    // An import call's 16 lines, each 2 ms of work, asked for at once.
    const backlog = Array.from({ length: 16 }, (_, i) => turn("importer", () => (busy(2), order.push(`i${i}`))));
    // A timer due at once: it only fires if the event loop gets a pass while the backlog is worked off.
    let timerAfter = -1;
    setTimeout(() => (timerAfter = order.length), 0);
    // Another project's create arrives while the backlog waits.
    const other = turn("other", () => order.push("other"));
    await Promise.all([...backlog, other]);
    // The first line ran at once (nothing waited); the other project is served next, not 15 lines later.
    expect(order.indexOf("other")).to.be.at.most(2);
    expect(order.filter((s) => s.startsWith("i"))).to.deep.equal(Array.from({ length: 16 }, (_, i) => `i${i}`));
    expect(timerAfter, "the timer waited for the whole backlog").to.be.within(1, 15);
  });

  it("two projects with backlogs alternate", async () => {
    const turn = fairTurns(1_000);
    const order: string[] = [];
    await Promise.all([
      turn("a", () => order.push("a0")),
      ...[1, 2, 3].map((i) => turn("a", () => order.push(`a${i}`))),
      ...[0, 1, 2].map((i) => turn("b", () => order.push(`b${i}`))),
    ]);
    expect(order).to.deep.equal(["a0", "a1", "b0", "a2", "b1", "a3", "b2"]);
  });
});
