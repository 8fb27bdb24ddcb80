// Counts that survive a writer killed mid-write (MongoDB): a document write and the update of
// its counts are two commands, and kill -9 between them must not leave a count wrong after the
// next start. A child process moves documents between groups as fast as it can and is killed
// at a random moment, several times; then the store opens as a new process would and every
// count must equal the documents; the same for the article store's list totals by status and label.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { expect } from "chai";
import { closeMongo, mongoDb } from "../../lib/mongo.js";
import { mongoCollection } from "../../lib/store/mongo-collection.js";
import { requireMongo } from "../support/servers.js";
import { openMongoArticleStore } from "../../services/articles/store/open.js";
import { ARTICLE_STATUSES, type ArticleStatus, type ArticleStore } from "../../services/articles/store/port.js";
import { ARTICLE_WRITER_DOCS, ARTICLE_WRITER_LABELS, ARTICLE_WRITER_PROJECT } from "../support/article-writer-spec.js";
import { TALLY_WRITER_DOCS, TALLY_WRITER_SPEC, TALLY_WRITER_STATUSES } from "../support/tally-writer-spec.js";

type Doc = { _id: string; status: string };

describe("MongoDB tallies: a writer killed between a write and its count", function () {
  this.timeout(180_000);
  let url: string;
  before(async function () {
    url = await requireMongo(this);
  });
  after(() => closeMongo());

  async function killWriterMidway(dbName: string, name: string, writer = "test/support/tally-writer.ts"): Promise<void> {
    const child = spawn(process.execPath, ["--import", "tsx", writer, url, dbName, name], { stdio: ["ignore", "pipe", "inherit"] });
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

  it("settles the article store's list totals by status and label the same way: each filtered count equals the articles after the next start", async () => {
    const dbName = `tally_crash_articles_${process.pid}`;
    const name = "articles";
    const db = await mongoDb(url, dbName);
    const first = await openMongoArticleStore(db, name);
    for (let i = 0; i < ARTICLE_WRITER_DOCS; i++) {
      await first.insert({ id: `w${i}`, projectId: ARTICLE_WRITER_PROJECT, title: "T", text: "x", isRaw: false, parse: false, voice: "alloy", lang: "en-US", labels: ["a"] });
    }
    const real = { _tallyOf: { $exists: false }, _tallyBuilt: { $exists: false }, _tallyGhost: { $exists: false } };
    const filters = [undefined, ...ARTICLE_STATUSES.filter((s) => s !== "deleted")].flatMap((status) => [undefined, ...ARTICLE_WRITER_LABELS].map((label) => ({ status, label })));
    const truth = (f: { status?: ArticleStatus; label?: string }) =>
      db.collection(name).countDocuments({ ...real, projectId: ARTICLE_WRITER_PROJECT, deleted: false, ...(f.status ? { status: f.status } : {}), ...(f.label ? { labels: f.label } : {}) });
    let miscounted = 0;
    for (let round = 0; round < 4; round++) {
      await killWriterMidway(dbName, name, "test/support/article-writer.ts");
      const wrong = async (store: ArticleStore) => {
        const off: string[] = [];
        for (const f of filters) {
          const [got, want] = [(await store.list(ARTICLE_WRITER_PROJECT, 1, 0, f)).count, await truth(f)];
          if (got !== want) off.push(`${f.status}/${f.label}: ${got} for ${want}`);
        }
        return off;
      };
      if ((await wrong(first)).length) miscounted++;
      // The next start: opening the store declares its tallies and settles what the writer left marked.
      const next = await openMongoArticleStore(await mongoDb(url, dbName), name);
      expect(await wrong(next), `round ${round}`).to.deep.equal([]);
      expect(await db.collection(name).countDocuments({ _tallyDirty: { $exists: true } })).to.equal(0);
      await next.close();
    }
    await first.close();
    console.log(`      ${miscounted} of 4 kills left filtered counts wrong until the next start settled them`);
    await db.dropDatabase();
  });
});
