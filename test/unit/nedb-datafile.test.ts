// The NeDB release's datafiles read without NeDB: last line per _id, deletions,
// index lines, dates, a torn last line; and a file far larger than the heap
// growth it causes.
import { expect } from "chai";
import { createWriteStream } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { once } from "node:events";
import v8 from "node:v8";
import vm from "node:vm";
import { openNedbDatafile, type NedbDocument } from "../../lib/store/nedb-datafile.js";

describe("NeDB datafile reader", function () {
  this.timeout(120_000);
  let dir: string;
  before(async () => (dir = await mkdtemp(path.join(tmpdir(), "nedb-datafile-"))));
  after(async () => rm(dir, { recursive: true, force: true }));

  const all = async (file: string) => {
    const out: NedbDocument[] = [];
    for await (const d of (await openNedbDatafile(file)).read()) out.push(d);
    return out;
  };

  it("keeps the last line of each _id, drops deleted ones and index lines, revives dates and ignores a torn last line", async () => {
    const file = path.join(dir, "tokens.db");
    const lines = [
      JSON.stringify({ _id: "a", n: 1, created: { $$date: 1_700_000_000_000 } }),
      JSON.stringify({ $$indexCreated: { fieldName: "hash", unique: true, sparse: false } }),
      JSON.stringify({ _id: "b", n: 1, nested: { at: { $$date: 0 }, list: [{ $$date: 5 }] } }),
      JSON.stringify({ _id: "a", n: 2, created: { $$date: 1_700_000_000_000 }, revoked: { $$date: 1_700_000_100_000 } }),
      JSON.stringify({ _id: "c", n: 1 }),
      JSON.stringify({ $$deleted: true, _id: "c" }),
      JSON.stringify({ _id: "d", n: 1 }),
      JSON.stringify({ $$deleted: true, _id: "d" }),
      JSON.stringify({ _id: "d", n: 3, literal: { $$date: 1, other: true } }),
      "",
      JSON.stringify({ $$indexRemoved: "hash" }),
      '{"_id":"e","n":1,"text":"cut short by a cra',
    ];
    await writeFile(file, lines.join("\n"));
    const f = await openNedbDatafile(file);
    expect(f).to.include({ documents: 3, unreadableLines: 1 });
    const docs = await all(file);
    // In the order of their last lines.
    expect(docs.map((d) => d._id)).to.deep.equal(["b", "a", "d"]);
    expect(docs[1]).to.deep.equal({ _id: "a", n: 2, created: new Date(1_700_000_000_000), revoked: new Date(1_700_000_100_000) });
    expect(docs[0].nested).to.deep.equal({ at: new Date(0), list: [new Date(5)] });
    // Only an object that is exactly {$$date} is a date.
    expect(docs[2]).to.deep.equal({ _id: "d", n: 3, literal: { $$date: 1, other: true } });
  });

  it("reads a file of 150 MB with far less heap than its size", async () => {
    const file = path.join(dir, "articles.db");
    const out = createWriteStream(file);
    const text = "x".repeat(10_000);
    const ids = 10_000;
    // Every document written once, then half of them again: 15,000 lines of ~10 KB.
    for (let i = 0; i < ids * 1.5; i++) {
      const id = i % ids;
      if (!out.write(`${JSON.stringify({ _id: `article-${id}`, revision: i < ids ? 1 : 2, text, changedAt: i })}\n`)) await once(out, "drain");
    }
    out.end();
    await once(out, "finish");

    // Live heap, not garbage the collector has not come to yet.
    v8.setFlagsFromString("--expose-gc");
    const gc = vm.runInNewContext("gc") as () => void;
    gc();
    const base = process.memoryUsage().heapUsed;
    let peak = 0;
    const sample = () => {
      gc();
      peak = Math.max(peak, process.memoryUsage().heapUsed - base);
    };
    const f = await openNedbDatafile(file);
    sample();
    expect(f.bytes).to.be.greaterThan(150_000_000);
    expect(f.documents).to.equal(ids);
    let n = 0;
    let revised = 0;
    for await (const d of f.read()) {
      n++;
      if (d.revision === 2) revised++;
      if (n % 500 === 0) sample();
    }
    expect(n).to.equal(ids);
    expect(revised).to.equal(ids / 2);
    expect(peak, `heap grew by ${Math.round(peak / 1e6)} MB`).to.be.below(20_000_000);
  });
});
