// Bounds on import uploads (gateway/import-limits.ts) and the fair turns of
// their store work (gateway/import-lanes.ts), on their own.
import { expect } from "chai";
import { HttpError } from "../../gateway/errors.js";
import { meteredUpload, openImports } from "../../gateway/import-limits.js";
import { importLanes } from "../../gateway/import-lanes.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("gateway: import limits and lanes", () => {
  it("open imports: at most maxPerProject per project and maxOpen in all, 429 with Retry-After beyond, places given back once", () => {
    const open = openImports({ maxPerProject: 2, maxOpen: 3 });
    const a1 = open.enter("a");
    open.enter("a");
    const refused = (() => {
      try {
        open.enter("a");
      } catch (e) {
        return e;
      }
    })();
    expect(refused).to.be.instanceOf(HttpError);
    expect((refused as HttpError).status).to.equal(429);
    expect(Number((refused as HttpError).headers["Retry-After"])).to.be.greaterThan(0);
    open.enter("b");
    expect(() => open.enter("c")).to.throw(/server has 3 imports open/);
    a1();
    a1();
    expect(open.open).to.equal(2);
    open.enter("a");
    expect(() => open.enter("a")).to.throw(/already has 2 imports open/);
  });

  it("an upload slower than the minimum rate ends at the end of its window, however often a byte comes; a fast one goes through whole", async () => {
    async function* trickle() {
      for (let i = 0; i < 100; i++) {
        await sleep(20);
        yield Buffer.from(" ");
      }
    }
    const slow = meteredUpload(trickle(), { minBytesPerSecond: 1000, windowMs: 300 });
    let got = 0;
    for await (const c of slow.input) got += c.length;
    expect(slow.stopped).to.match(/slower than 1000 bytes per second over 0.3 s/);
    expect(got).to.be.below(100);

    async function* fast() {
      for (let i = 0; i < 20; i++) {
        await sleep(20);
        yield Buffer.alloc(1000);
      }
    }
    const ok = meteredUpload(fast(), { minBytesPerSecond: 1000, windowMs: 100 });
    let all = 0;
    for await (const c of ok.input) all += c.length;
    expect(ok.stopped).to.equal(undefined);
    expect(all).to.equal(20_000);
  });

  it("an upload that sends nothing ends after its window", async () => {
    const never: AsyncIterable<Buffer> = { [Symbol.asyncIterator]: () => ({ next: () => new Promise<IteratorResult<Buffer>>(() => {}) }) };
    const m = meteredUpload(never, { minBytesPerSecond: 1, windowMs: 50 });
    for await (const _ of m.input) expect.fail("nothing was sent");
    expect(m.stopped).to.be.a("string");
  });

  it("lanes: calls of the projects waiting are served in turn, one at a time, not project by project", async () => {
    const lanes = importLanes(1);
    const order: string[] = [];
    let running = 0;
    let most = 0;
    const call = (name: string) => async () => {
      running++;
      most = Math.max(most, running);
      await sleep(1);
      order.push(name);
      running--;
    };
    const a = lanes.lane("a");
    const b = lanes.lane("b");
    const c = lanes.lane("c");
    await Promise.all([a(call("a1")), a(call("a2")), a(call("a3")), b(call("b1")), b(call("b2")), c(call("c1"))]);
    expect(most).to.equal(1);
    // a1 had started alone; then each waiting project gets a turn before a project's next call.
    expect(order.slice(0, 4)).to.deep.equal(["a1", "b1", "c1", "a2"]);
    expect(order).to.have.length(6);
    expect(lanes.pending).to.equal(0);
  });
  it("lanes: single creates take their project's turn without waiting for imports, and take turns among projects", async () => {
    const lanes = importLanes(1, 2);
    const order: string[] = [];
    const held: Array<() => void> = [];
    /** A call that runs until released. */
    const call = (name: string) => () =>
      new Promise<void>((resolve) => {
        order.push(name);
        held.push(() => resolve());
      });
    const done = [
      // The imports' one place is taken by a's first call; a and b have more waiting.
      lanes.lane("a")(call("a-import1")),
      lanes.lane("a")(call("a-import2")),
      lanes.lane("b")(call("b-import1")),
      // Another project's create starts at once, ahead of every waiting import call, and so does a's own.
      lanes.createLane("c")(call("c-create1")),
      lanes.createLane("a")(call("a-create1")),
      // Both create places are taken now: these wait, then go one project at a time.
      lanes.createLane("c")(call("c-create2")),
      lanes.createLane("c")(call("c-create3")),
      lanes.createLane("d")(call("d-create1")),
    ];
    expect(order).to.deep.equal(["a-import1", "c-create1", "a-create1"]);
    expect(lanes.pending).to.equal(8);
    // A create place is given back: the next create goes, the oldest waiting project first, never an import.
    held.splice(1, 1)[0]();
    await sleep(5);
    expect(order).to.deep.equal(["a-import1", "c-create1", "a-create1", "c-create2"]);
    held.splice(1, 1)[0]();
    await sleep(5);
    expect(order.slice(4)).to.deep.equal(["d-create1"]);
    // The import place is given back: the next import in turn (b, which has not been served yet).
    held.splice(0, 1)[0]();
    await sleep(5);
    expect(order.slice(5)).to.deep.equal(["b-import1"]);
    while (held.length) {
      held.shift()!();
      await sleep(5);
    }
    await Promise.all(done);
    expect(order).to.have.length(8);
    expect(lanes.pending).to.equal(0);
  });
});
