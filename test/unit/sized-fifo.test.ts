// A map bounded by the sizes of its entries, oldest out first (lib/sized-fifo.ts).
import { expect } from "chai";
import { SizedFifo } from "../../lib/sized-fifo.js";

describe("SizedFifo", () => {
  it("keeps the sum of sizes under its bound, letting the oldest go first", () => {
    const f = new SizedFifo<string>(10);
    for (const k of ["a", "b", "c", "d", "e"]) f.set(k, k.toUpperCase(), 3);
    expect(f.total).to.equal(9);
    expect([f.get("a"), f.get("b"), f.get("c"), f.get("d"), f.get("e")]).to.deep.equal([undefined, undefined, "C", "D", "E"]);
  });

  it("keeps order right after entries leave from the middle and the ends, and after a replacement", () => {
    const f = new SizedFifo<number>(4);
    for (const [i, k] of ["a", "b", "c", "d"].entries()) f.set(k, i, 1);
    f.delete("b");
    f.delete("a");
    f.delete("d");
    f.set("c", 9, 1); // replaced: now the newest
    f.set("e", 4, 1);
    f.set("f", 5, 1);
    f.set("g", 6, 1);
    f.set("h", 7, 1);
    expect(f.get("c")).to.equal(undefined);
    expect(["e", "f", "g", "h"].map((k) => f.get(k))).to.deep.equal([4, 5, 6, 7]);
    expect(f.size).to.equal(4);
    expect(f.total).to.equal(4);
  });

  it("keeps no entry larger than its bound, and lets a replaced key's old value go", () => {
    const f = new SizedFifo<string>(5);
    f.set("a", "x", 2);
    f.set("a", "too big", 6);
    expect(f.get("a")).to.equal(undefined);
    expect(f.total).to.equal(0);
    f.set("b", "y", 5);
    f.clear();
    expect([f.size, f.total, f.get("b")]).to.deep.equal([0, 0, undefined]);
    f.set("c", "z", 5);
    expect(f.get("c")).to.equal("z");
  });
});
