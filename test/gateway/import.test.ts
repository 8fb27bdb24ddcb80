// POST /api/articles/import against a stand-in articles service: what the
// route does when that service goes away midway, and when the client does.
import { expect } from "chai";
import { openImport } from "../support/import.js";
import { startHarness, type Harness } from "./support.js";

const row = (i: number) => JSON.stringify({ title: `Line ${i}`, text: "x" }) + "\n";
const rows = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => row(from + i)).join("");

describe("gateway: bulk import route", function () {
  this.timeout(60_000);
  let h: Harness;
  beforeEach(async () => {
    h = await startHarness();
  });
  afterEach(async () => {
    await h.close();
  });

  it("the articles service going away midway fails the remaining lines with 503, and the summary still comes", async () => {
    const imp = openImport(h.gateway.url, "full-token");
    await imp.write(rows(1, 100));
    await imp.waitForLines(100);
    await h.upstream.close();
    await imp.write(rows(101, 200));
    imp.end();
    await imp.ended;
    const results = imp.received.slice(0, -1);
    expect(results.map((l) => l.line)).to.deep.equal(Array.from({ length: 200 }, (_, i) => i + 1));
    expect(results.slice(0, 100).every((l) => l.result === "ok")).to.equal(true);
    for (const l of results.slice(100)) {
      expect(l).to.include({ result: "fail", status: 503 });
      expect(l.message).to.match(/request id/);
    }
    expect(imp.received.at(-1)).to.deep.equal({ result: "ok", imported: 100, failed: 100 });
  });

  it("a client that disconnects mid-upload stops the import: nothing more is sent to the service", async () => {
    const imp = openImport(h.gateway.url, "full-token");
    await imp.write(rows(1, 64));
    await imp.waitForLines(64);
    const before = h.fake.batches.reduce((a, b) => a + b, 0);
    imp.req.destroy();
    await new Promise((r) => setTimeout(r, 300));
    expect(h.fake.batches.reduce((a, b) => a + b, 0)).to.equal(before);
    // The gateway is fine and serves the next import.
    const next = openImport(h.gateway.url, "full-token");
    await next.write(rows(1, 3));
    next.end();
    await next.ended;
    expect(next.received.at(-1)).to.deep.equal({ result: "ok", imported: 3, failed: 0 });
  });
});
