// The embedded collection appends through a datafile handle it keeps open
// (lib/store/nedb-collection.ts). A write that has resolved must be on disk
// even if the process dies without closing, also after compaction replaced
// the file under the handle.
import { expect } from "chai";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { openNedbCollection } from "../../lib/store/nedb-collection.js";

type Doc = { _id: string; n: number };

describe("NeDB collection datafile", () => {
  let dir: string;
  beforeEach(async () => (dir = await mkdtemp(path.join(os.tmpdir(), "nedb-col-"))));
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it("has every resolved write on disk without a close, before and after a compaction", async () => {
    const filename = path.join(dir, "things.db");
    const first = await openNedbCollection<Doc>({ filename });
    await first.insertOne({ _id: "a", n: 1 });
    await first.updateOne({ _id: "a" }, { $set: { n: 2 } });
    // A second reader of the file sees what a restart after a crash would.
    const snapshot = await openNedbCollection<Doc>({ filename: path.join(dir, "things.db") });
    expect(await snapshot.findOne({ _id: "a" })).to.include({ n: 2 });

    // close() compacts (replaces the file); reopening and writing must reach the new file.
    await first.close();
    const second = await openNedbCollection<Doc>({ filename, compactEveryMs: 5 });
    await new Promise((r) => setTimeout(r, 30)); // at least one compaction under an open handle
    await second.insertOne({ _id: "b", n: 3 });
    await second.updateOne({ _id: "a" }, { $set: { n: 4 } });
    const again = await openNedbCollection<Doc>({ filename });
    expect((await again.find({}, { sort: { _id: 1 } })).map((d) => [d._id, d.n])).to.deep.equal([
      ["a", 4],
      ["b", 3],
    ]);
    await second.close();
  });
});
