// The upgrade of a NeDB data directory (lib/store/nedb-upgrade.ts) on the
// release's fixture: every document arrives as the release left it, an
// interrupted copy resumes and ends identical, a volume too small stops it
// with nothing changed, and a second start does nothing.
import { expect } from "chai";
import { cp, mkdtemp, readdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import { pino } from "pino";
import type { DocumentCollection } from "../../lib/store/collection.js";
import { openNedbDatafile, type NedbDocument } from "../../lib/store/nedb-datafile.js";
import { NEDB_RELEASE, upgradeFromNedb, UpgradeSpaceError, type NedbUpgradeOptions, type NedbUpgradePlan, type UpgradeTarget } from "../../lib/store/nedb-upgrade.js";
import { openUpgradeTarget } from "../support/upgrade-target.js";

const FIXTURE = path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "fixtures", "nedb-release", "data");
const PLANS: NedbUpgradePlan[] = [NEDB_RELEASE.auth, NEDB_RELEASE.articles];

/** A logger whose lines the test reads. */
function capture() {
  const lines: Array<Record<string, unknown>> = [];
  const log = pino({ level: "info" }, new Writable({ write: (c, _e, cb) => (lines.push(JSON.parse(String(c))), cb()) }));
  return { log, lines };
}

/** Every document of every collection the plans fill, per collection. */
async function contents(dataDir: string): Promise<Record<string, NedbDocument[]>> {
  const out: Record<string, NedbDocument[]> = {};
  for (const plan of PLANS) {
    const db = await openUpgradeTarget(path.join(dataDir, plan.dir, plan.database), plan.what);
    for (const name of Object.values(plan.collections)) {
      const col = db.collection<NedbDocument>(name);
      out[name] = await col.find({}, { sort: { _id: 1 } });
      await col.close();
    }
    await db.close();
  }
  return out;
}

/** What the release's files hold, read independently of the copy. */
async function expected(): Promise<Record<string, NedbDocument[]>> {
  const out: Record<string, NedbDocument[]> = {};
  for (const plan of PLANS) {
    for (const [file, name] of Object.entries(plan.collections)) {
      const docs: NedbDocument[] = [];
      // As the copy reshapes them for this release's layout (the articles' deleted flag).
      const reshape = plan.reshape?.[name] ?? ((d: NedbDocument) => d);
      for await (const d of (await openNedbDatafile(path.join(FIXTURE, plan.dir, file))).read()) docs.push(reshape(d));
      out[name] = docs.sort((a, b) => (a._id < b._id ? -1 : 1));
    }
  }
  return out;
}

const exists = (p: string) => stat(p).then(() => true, () => false);

describe("upgrade of a NeDB data directory", function () {
  this.timeout(120_000);
  let dataDir: string;
  let want: Record<string, NedbDocument[]>;
  const options = (log: NedbUpgradeOptions["log"], more: Partial<NedbUpgradeOptions> = {}): NedbUpgradeOptions => ({ log, open: openUpgradeTarget, ...more });

  before(async () => (want = await expected()));
  beforeEach(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), "nedb-upgrade-"));
    await cp(FIXTURE, dataDir, { recursive: true });
  });
  afterEach(async () => rm(dataDir, { recursive: true, force: true }));

  it("copies every document of the release, logs progress, marks it complete and moves the old files aside", async () => {
    expect(want.articles.length).to.be.greaterThan(10);
    expect(want.tokens.length).to.equal(5);
    const { log, lines } = capture();
    expect(await upgradeFromNedb(dataDir, PLANS, options(log))).to.deep.equal(["auth", "articles"]);
    expect(await contents(dataDir)).to.deep.equal(want);
    // Dates stay dates.
    expect((await contents(dataDir)).tokens.find((t) => t.revoked)?.revoked).to.be.instanceOf(Date);

    const copied = lines.filter((l) => String(l.msg).startsWith("copied "));
    expect(copied.map((l) => [l.collection, l.documents, l.percent])).to.deep.equal(Object.entries(want).map(([name, docs]) => [name, docs.length, 100]));
    for (const l of copied) expect(l.perSecond).to.be.a("number");
    const aside = lines.filter((l) => String(l.msg).includes("nedb-before-sqlite"));
    expect(aside.map((l) => l.dir)).to.deep.equal([path.join(dataDir, "nedb-before-sqlite", "auth"), path.join(dataDir, "nedb-before-sqlite", "articles")]);
    for (const plan of PLANS) {
      for (const file of Object.keys(plan.collections)) {
        expect(await exists(path.join(dataDir, plan.dir, file)), file).to.equal(false);
        expect(await readFile(path.join(dataDir, "nedb-before-sqlite", plan.dir, file), "utf8")).to.equal(await readFile(path.join(FIXTURE, plan.dir, file), "utf8"));
      }
    }
    // Audio files are not touched.
    expect((await readdir(path.join(dataDir, "audio"))).sort()).to.deep.equal((await readdir(path.join(FIXTURE, "audio"))).sort());
  });

  it("resumes a copy interrupted after a few batches and ends with the same documents, none twice", async () => {
    const { log } = capture();
    let batches = 0;
    const fault = new Error("power cut");
    const interrupted = upgradeFromNedb(dataDir, PLANS, options(log, {
      batchSize: 3,
      afterBatch: (name) => {
        if (name === "articles" && ++batches === 2) throw fault;
      },
    }));
    await interrupted.then(() => expect.fail("not interrupted"), (e) => expect(e).to.equal(fault));
    // Auth is complete and moved aside; the articles files are still in place.
    expect(await exists(path.join(dataDir, "nedb-before-sqlite", "auth", "tokens.db"))).to.equal(true);
    expect(await exists(path.join(dataDir, "articles", "articles.db"))).to.equal(true);
    const partial = await contents(dataDir);
    expect(partial.articles.length).to.equal(6);

    const again = capture();
    expect(await upgradeFromNedb(dataDir, PLANS, options(again.log, { batchSize: 3 }))).to.deep.equal(["articles"]);
    expect(await contents(dataDir)).to.deep.equal(want);
    expect(again.lines.find((l) => l.collection === "articles" && String(l.msg).startsWith("resuming"))).to.include({ documents: 6 });
  });

  it("resumes when a batch was written but not recorded: the documents already there are skipped", async () => {
    const { log } = capture();
    let records = 0;
    const target = async (file: string, what: string): Promise<UpgradeTarget> => {
      const db = await openUpgradeTarget(file, what);
      return {
        collection: <D extends { _id: string }>(name: string) => {
          const col = db.collection<D>(name);
          if (name !== "upgrade") return col;
          // The progress record of the second articles batch never lands.
          const upsertOne: DocumentCollection<D>["upsertOne"] = async (k, u, o) => {
            if (k._id === "nedb:articles" && ++records === 2) throw new Error("killed");
            return col.upsertOne(k, u, o);
          };
          return new Proxy(col, { get: (t, method) => (method === "upsertOne" ? upsertOne : t[method as keyof typeof t]) });
        },
        close: () => db.close(),
      };
    };
    await upgradeFromNedb(dataDir, PLANS, options(log, { batchSize: 4, open: target })).then(() => expect.fail("not interrupted"), (e) => expect(e.message).to.equal("killed"));
    expect((await contents(dataDir)).articles.length).to.equal(8);
    await upgradeFromNedb(dataDir, PLANS, options(log, { batchSize: 4 }));
    expect(await contents(dataDir)).to.deep.equal(want);
  });

  it("takes the copy a crash during NeDB's compaction left (file~ without the file), as NeDB did", async () => {
    const { log } = capture();
    await rename(path.join(dataDir, "auth", "tokens.db"), path.join(dataDir, "auth", "tokens.db~"));
    // Beside a file, a ~ copy is unfinished: the file counts, the copy only moves aside.
    await writeFile(path.join(dataDir, "articles", "articles.db~"), '{"_id":"half-written","status":"ready"}\n');
    await upgradeFromNedb(dataDir, PLANS, options(log));
    expect(await contents(dataDir)).to.deep.equal(want);
    expect((await readdir(path.join(dataDir, "nedb-before-sqlite", "auth"))).sort()).to.deep.equal(["oembed-claims.db", "projects.db", "tokens.db~"]);
    expect((await readdir(path.join(dataDir, "nedb-before-sqlite", "articles"))).sort()).to.deep.equal(["articles.db", "articles.db~", "listening-stats.db", "pronunciations.db"]);
    expect((await readdir(path.join(dataDir, "articles"))).filter((f) => /\.db~?$/.test(f))).to.deep.equal([]);
  });

  it("stops with a clear error naming DATA_DIR when the volume is too small, and changes nothing", async () => {
    const { log } = capture();
    const before = await readdir(dataDir, { recursive: true });
    const err = await upgradeFromNedb(dataDir, PLANS, options(log, { freeBytes: async () => 10 * 1024 * 1024 })).then(
      () => expect.fail("upgraded"),
      (e) => e,
    );
    expect(err).to.be.instanceOf(UpgradeSpaceError);
    expect(err.message).to.contain(`DATA_DIR=${dataDir}`).and.to.match(/free space/).and.to.match(/Nothing was changed/);
    expect((await readdir(dataDir, { recursive: true })).sort()).to.deep.equal(before.sort());
  });

  it("does nothing on the next start, and a database complete before the files moved only moves them", async () => {
    const { log } = capture();
    await upgradeFromNedb(dataDir, PLANS, options(log));
    const again = capture();
    expect(await upgradeFromNedb(dataDir, PLANS, options(again.log, { freeBytes: async () => 0 }))).to.deep.equal([]);
    expect(again.lines).to.deep.equal([]);

    // Killed after the mark, before the move: the next start moves the files and copies nothing.
    await cp(path.join(FIXTURE, "auth", "tokens.db"), path.join(dataDir, "auth", "tokens.db"));
    const third = capture();
    expect(await upgradeFromNedb(dataDir, PLANS, options(third.log))).to.deep.equal([]);
    expect(await exists(path.join(dataDir, "auth", "tokens.db"))).to.equal(false);
    expect(third.lines.filter((l) => String(l.msg).startsWith("cop"))).to.deep.equal([]);
    expect(await contents(dataDir)).to.deep.equal(want);
  });
});
