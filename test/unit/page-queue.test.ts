// Background page fetches (services/articles/pages/queue.ts): bounded overall
// and per project, projects served in turn, nothing run twice.
import { expect } from "chai";
import { createPageQueue } from "../../services/articles/pages/queue.js";

function gatedRuns() {
  const started: string[] = [];
  const gates = new Map<string, () => void>();
  const run = (id: string) => {
    started.push(id);
    return new Promise<void>((r) => gates.set(id, r));
  };
  const finish = async (id: string) => {
    gates.get(id)!();
    // Lets the queue's finally and the next start run.
    for (let i = 0; i < 5; i++) await Promise.resolve();
  };
  return { started, run, finish };
}

describe("page fetch queue", () => {
  it("runs at most `perProject` of one project and `overall` in all, taking the waiting projects in turn", async () => {
    const g = gatedRuns();
    const q = createPageQueue(g.run, { overall: 3, perProject: 2, maxQueued: 100 });
    for (let i = 0; i < 5; i++) q.add("big", `big-${i}`);
    expect(g.started).to.deep.equal(["big-0", "big-1"]);
    q.add("small", "small-0");
    q.add("small", "small-1");
    // The third slot goes to the other project; the big one is at its own bound.
    expect(g.started).to.deep.equal(["big-0", "big-1", "small-0"]);
    expect(q.running).to.equal(3);
    await g.finish("big-0");
    expect(g.started.slice(3)).to.deep.equal(["big-2"]);
    await g.finish("small-0");
    expect(g.started.slice(4)).to.deep.equal(["small-1"]);
    for (const id of ["big-1", "big-2", "small-1"]) await g.finish(id);
    await g.finish("big-3");
    expect(g.started).to.include.members(["big-3", "big-4"]);
    await g.finish("big-4");
    expect(q.running).to.equal(0);
    await q.close();
  });

  it("takes an article once while it is queued or running, refuses when full, and survives a failing run", async () => {
    let calls = 0;
    const q = createPageQueue(
      async () => {
        calls++;
        throw new Error("boom");
      },
      { overall: 1, perProject: 1, maxQueued: 2 },
    );
    const g = gatedRuns();
    const held = createPageQueue(g.run, { overall: 1, perProject: 1, maxQueued: 2 });
    expect(held.add("p", "a")).to.equal(true);
    expect(held.add("p", "a")).to.equal(false);
    expect(held.add("p", "b")).to.equal(true);
    expect(held.add("p", "c")).to.equal(true);
    expect(held.add("p", "d")).to.equal(false);
    await g.finish("a");
    expect(g.started).to.deep.equal(["a", "b"]);
    expect(q.add("p", "x")).to.equal(true);
    await new Promise((r) => setImmediate(r));
    expect(calls).to.equal(1);
    expect(q.add("p", "x")).to.equal(true);
    await new Promise((r) => setImmediate(r));
    expect(calls).to.equal(2);
    await g.finish("b");
    await g.finish("c");
    await Promise.all([q.close(), held.close()]);
  });
});
