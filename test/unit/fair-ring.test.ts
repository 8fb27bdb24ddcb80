import { expect } from "chai";
import { FairRing } from "../../lib/bus/fair-ring.js";

/** Serves `n` jobs from queues (lane → remaining jobs) the way the buses do; returns the lanes in service order. */
function serve(ring: FairRing, queues: Record<string, number>, n: number): string[] {
  const out: string[] = [];
  while (out.length < n) {
    const lane = ring.candidates().find((l) => {
      if ((queues[l] ?? 0) > 0) return true;
      ring.idle(l);
      return false;
    });
    if (!lane) break;
    queues[lane]--;
    ring.served(lane);
    out.push(lane);
  }
  return out;
}

describe("FairRing (turn order across projects)", () => {
  it("alternates between lanes that all have work", () => {
    const ring = new FairRing();
    const q = { a: 4, b: 4, c: 4 };
    for (const l of Object.keys(q)) ring.activate(l);
    expect(serve(ring, q, 9).join("")).to.equal("abcabcabc");
  });

  it("serves a newly active lane next, then gives it normal turns", () => {
    const ring = new FairRing();
    const q: Record<string, number> = { a: 10, b: 10 };
    ring.activate("a");
    ring.activate("b");
    expect(serve(ring, q, 3).join("")).to.equal("aba");
    q.c = 3;
    ring.activate("c");
    expect(serve(ring, q, 6).join("")).to.equal("cbacba");
  });

  it("drops a lane found empty and keeps the order of the others", () => {
    const ring = new FairRing();
    const q: Record<string, number> = { a: 1, b: 3, c: 3 };
    for (const l of ["a", "b", "c"]) ring.activate(l);
    expect(serve(ring, q, 7).join("")).to.equal("abcbcbc");
    expect(ring.size).to.equal(2);
    expect(serve(ring, q, 1)).to.deep.equal([]);
    expect(ring.size).to.equal(0);
  });

  it("activating a lane already in the rotation changes nothing", () => {
    const ring = new FairRing();
    const q = { a: 5, b: 5 };
    ring.activate("a");
    ring.activate("b");
    expect(serve(ring, q, 1)).to.deep.equal(["a"]);
    ring.activate("a");
    ring.activate("b");
    expect(serve(ring, q, 3).join("")).to.equal("bab");
  });
});
