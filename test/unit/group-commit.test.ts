// lib/group-commit.ts: what arrives while a key's call is on its way goes in
// the next call, in order; keys never wait for each other; a failed call
// fails only its own items.
import { expect } from "chai";
import { groupCommit } from "../../lib/group-commit.js";

function deferred() {
  let open!: () => void;
  const gate = new Promise<void>((r) => (open = r));
  return { gate, open };
}

describe("group commit", () => {
  it("sends an idle key's item at once, then everything that arrived meanwhile as one batch, in order", async () => {
    const sent: number[][] = [];
    const first = deferred();
    const send = groupCommit(async (_key: string, items: number[]) => {
      sent.push(items);
      if (sent.length === 1) await first.gate;
      return items.map((n) => n * 10);
    });
    const answers = [1, 2, 3, 4].map((n) => send("p", n));
    expect(sent).to.deep.equal([[1]]);
    first.open();
    expect(await Promise.all(answers)).to.deep.equal([10, 20, 30, 40]);
    expect(sent).to.deep.equal([[1], [2, 3, 4]]);
  });

  it("with gatherTurn, an idle key's items of one turn go as one batch, and the next turn's wait for it", async () => {
    const sent: number[][] = [];
    const send = groupCommit(
      async (_key: string, items: number[]) => {
        sent.push(items);
        return items.map((n) => n * 10);
      },
      { gatherTurn: true },
    );
    const first = [1, 2, 3].map((n) => send("p", n));
    expect(sent).to.deep.equal([]);
    expect(await Promise.all(first)).to.deep.equal([10, 20, 30]);
    expect(sent).to.deep.equal([[1, 2, 3]]);
    expect(await send("p", 4)).to.equal(40);
    expect(sent).to.deep.equal([[1, 2, 3], [4]]);
  });

  it("never puts more than maxBatch items in one call", async () => {
    const sizes: number[] = [];
    const send = groupCommit(
      async (_key: string, items: number[]) => {
        sizes.push(items.length);
        await new Promise((r) => setImmediate(r));
        return items;
      },
      { maxBatch: 3 },
    );
    await Promise.all(Array.from({ length: 8 }, (_, i) => send("p", i)));
    expect(sizes).to.deep.equal([1, 3, 3, 1]);
  });

  it("keys do not wait for each other", async () => {
    const slow = deferred();
    const send = groupCommit(async (key: string, items: string[]) => {
      if (key === "slow") await slow.gate;
      return items;
    });
    const held = send("slow", "a");
    expect(await send("fast", "b")).to.equal("b");
    slow.open();
    expect(await held).to.equal("a");
  });

  it("a failed call rejects its own items only; the next batch still goes", async () => {
    const first = deferred();
    let calls = 0;
    const send = groupCommit(async (_key: string, items: number[]) => {
      calls++;
      if (calls === 1) {
        await first.gate;
        throw new Error("auth unreachable");
      }
      return items;
    });
    const failing = send("p", 1);
    const later = [send("p", 2), send("p", 3)];
    first.open();
    const caught = await failing.catch((e: Error) => e.message);
    expect(caught).to.equal("auth unreachable");
    expect(await Promise.all(later)).to.deep.equal([2, 3]);
  });
});
