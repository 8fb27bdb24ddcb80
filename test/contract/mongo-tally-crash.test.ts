// Counts that survive a writer killed mid-write (MongoDB): a document write and the update of
// its counts are two commands, and kill -9 between them must not leave a count wrong after the
// next start. A child process moves documents between groups as fast as it can and is killed
// at a random moment, several times; then the store opens as a new process would and every
// count must equal the documents.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { expect } from "chai";
import { closeMongo, mongoDb } from "../../lib/mongo.js";
import { mongoCollection } from "../../lib/store/mongo-collection.js";
import { requireMongo } from "../support/servers.js";
import { TALLY_WRITER_DOCS, TALLY_WRITER_SPEC, TALLY_WRITER_STATUSES } from "../support/tally-writer-spec.js";

type Doc = { _id: string; status: string };

describe("MongoDB tallies: a writer killed between a write and its count", function () {
  this.timeout(180_000);
  let url: string;
  before(async function () {
    url = await requireMongo(this);
  });
  after(() => closeMongo());

  async function killWriterMidway(dbName: string, name: string): Promise<void> {
    const child = spawn(process.execPath, ["--import", "tsx", "test/support/tally-writer.ts", url, dbName, name], { stdio: ["ignore", "pipe", "inherit"] });
    try {
      await new Promise<void>((resolve, reject) => {
        child.stdout!.on("data", (d: Buffer) => d.toString().includes("writing") && resolve());
        child.on("exit", (code) => reject(new Error(`the writer exited by itself (${code})`)));
      });
      await new Promise((r) => setTimeout(r, 50 + Math.random() * 250));
    } finally {
      child.kill("SIGKILL");
      if (child.exitCode === null && child.signalCode === null) await once(child, "exit");
    }
  }

  it("settles what the dead writers left on the next start: every count equals the documents", async () => {
    const dbName = `tally_crash_${process.pid}`;
    const name = "docs";
    const first = mongoCollection<Doc>(await mongoDb(url, dbName), name);
    await first.ensureTally(TALLY_WRITER_SPEC);
    for (let i = 0; i < TALLY_WRITER_DOCS; i++) await first.insertOne({ _id: `d${i}`, status: TALLY_WRITER_STATUSES[i % 3] });

    const truth = async () => {
      const counts = new Map<string, number>();
      for (const d of await first.find({})) counts.set(d.status, (counts.get(d.status) ?? 0) + 1);
      return counts;
    };
    let miscounted = 0;
    for (let round = 0; round < 6; round++) {
      await killWriterMidway(dbName, name);
      // What the counters say right after the kill, before anyone settles: how often the kill hit the window.
      const want = await truth();
      const before = await first.tallies("status");
      if (TALLY_WRITER_STATUSES.some((s) => (before.get(s) ?? 0) !== (want.get(s) ?? 0))) miscounted++;

      // The next start: a new collection object, every tally declared, then the settling.
      const next = mongoCollection<Doc>(await mongoDb(url, dbName), name);
      await next.ensureTally(TALLY_WRITER_SPEC);
      const settled = await next.settleTallies!();
      const after = await next.tallies("status");
      for (const s of TALLY_WRITER_STATUSES) expect(after.get(s) ?? 0, `round ${round}, ${s} (${settled} settled)`).to.equal(want.get(s) ?? 0);
      expect(await next.find({ _tallyDirty: { $exists: true } })).to.have.length(0);
    }
    console.log(`      ${miscounted} of 6 kills left counts wrong until the next start settled them`);
    const db = await mongoDb(url, dbName);
    await db.dropDatabase();
  });
});
