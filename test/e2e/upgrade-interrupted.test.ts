// The upgrade from NeDB under the conditions an operator meets: the embedded
// default killed (SIGKILL) in the middle of copying an archive resumes on the
// next start and ends with every document once; the auth and articles
// processes started on their own upgrade their own directories; a volume too
// small stops start-up with a message naming DATA_DIR and nothing changed.
import { expect } from "chai";
import { spawn } from "node:child_process";
import { appendFile, cp, mkdtemp, readdir, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { startEmbedded } from "../../launch/embedded.js";
import { openNedbDatafile, type NedbDocument } from "../../lib/store/nedb-datafile.js";
import { NEDB_RELEASE } from "../../lib/store/nedb-upgrade.js";
import { openSqliteDatabase } from "../../lib/store/sqlite-collection.js";
import { mountSmallVolume } from "../support/tmpfs.js";
import { api } from "../support/http.js";
import { ROOMY_RATE_LIMITS } from "../support/rate-limits.js";
import { listedNewsIds, NEDB_FIXTURE, nedbDataDir, nedbManifest } from "../support/nedb-fixture.js";
import { sink } from "../support/sink.js";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const BASE_ENV = { PORT: "0", HOST: "127.0.0.1", INTERNAL_TOKEN: "internal-token-for-the-upgrade-0123456789", ...ROOMY_RATE_LIMITS };

/** Grows the fixture's articles file into an archive: `n` more articles of ~500 characters, a tenth of them revised later. */
async function growArchive(dataDir: string, n: number): Promise<void> {
  const file = path.join(dataDir, "articles", "articles.db");
  const model = JSON.parse((await readFile(file, "utf8")).split("\n")[0]) as NedbDocument;
  const text = "The council met again on Tuesday to discuss the harbour budget. ".repeat(8);
  let chunk = "";
  for (let i = 0; i < n; i++) {
    const revision = i % 10 === 0 ? 2 : 1;
    for (let r = 1; r <= revision; r++) {
      chunk += `${JSON.stringify({ ...model, _id: `archive-${i}`, externalId: `archive-${i}`, url: `https://news.example/archive/${i}`, title: `Archive ${i}`, text, revision: r, changedAt: 1_700_000_000_000 + i })}\n`;
    }
    if (chunk.length > 1 << 20) {
      await appendFile(file, chunk);
      chunk = "";
    }
  }
  await appendFile(file, chunk);
}

async function sqliteDocs(file: string, collection: string): Promise<NedbDocument[]> {
  const db = await openSqliteDatabase({ filename: file, what: "check" });
  const col = db.collection<NedbDocument>(collection);
  try {
    return await col.find({}, { sort: { _id: 1 } });
  } finally {
    await col.close();
    await db.close();
  }
}

describe("upgrade from NeDB: interrupted, and on a volume too small", function () {
  this.timeout(300_000);
  const dirs: string[] = [];
  after(async () => {
    for (const d of dirs) await rm(d, { recursive: true, force: true });
  });

  it("a start killed in the middle of the copy resumes on the next start and ends with every document exactly once", async () => {
    const dataDir = await nedbDataDir();
    dirs.push(dataDir);
    const archive = 80_000;
    await growArchive(dataDir, archive);
    const source = await openNedbDatafile(path.join(dataDir, "articles", "articles.db"));
    const want: NedbDocument[] = [];
    // As the copy reshapes them for this release's layout (the articles' deleted flag).
    const reshape = NEDB_RELEASE.articles.reshape.articles;
    for await (const d of source.read()) want.push(reshape(d));
    want.sort((a, b) => (a._id < b._id ? -1 : 1));

    const child = spawn(process.execPath, ["--import", "tsx", path.join(ROOT, "launch/embedded.ts")], {
      cwd: ROOT,
      env: { ...process.env, ...BASE_ENV, DATA_DIR: dataDir, LOG_LEVEL: "info" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const exited = new Promise<NodeJS.Signals | null>((r) => child.once("exit", (_code, signal) => r(signal)));
    // Killed at its first progress line (after 2 s): the archive is large enough that the copy takes longer.
    let progress: Record<string, unknown> | undefined;
    try {
      for await (const line of createInterface({ input: child.stdout! })) {
        const entry = line.startsWith("{") ? JSON.parse(line) : {};
        if (entry.collection === "articles" && String(entry.msg).startsWith("copying")) {
          progress = entry;
          break;
        }
        if (String(entry.msg).startsWith("copied articles")) break;
      }
    } finally {
      child.kill("SIGKILL");
    }
    expect(await exited).to.equal("SIGKILL");
    expect(progress, "killed during the copy (it ended within 2 s: make the archive larger)").to.not.equal(undefined);
    expect(progress!.documents as number).to.be.within(1, archive);
    // The old file is untouched and still in place; the database holds part of it.
    expect((await stat(path.join(dataDir, "articles", "articles.db"))).size).to.equal(source.bytes);
    const partial = (await sqliteDocs(path.join(dataDir, "articles", "articles.sqlite"), "articles")).length;
    expect(partial).to.be.within(1, want.length - 1);

    const started = Date.now();
    const sys = await startEmbedded({ ...BASE_ENV, DATA_DIR: dataDir }, sink());
    const restartMs = Date.now() - started;
    try {
      const m = await nedbManifest();
      const news = api(sys.url, m.tokens.newsFull);
      const list = await news("GET", "/api/articles?limit=10");
      // Every news article once: the fixture's (less the deleted one) and the whole archive.
      expect(list.body.count).to.equal(listedNewsIds(m).length + archive);
      for (const i of [0, 1, Math.floor(archive / 2), archive - 1]) {
        const a = (await news("GET", `/api/articles_external_id/archive-${i}`)).body.article;
        expect(a, `archive-${i}`).to.include({ id: `archive-${i}`, title: `Archive ${i}` });
      }
    } finally {
      await sys.close();
    }
    // Identical to what the release's file holds, document by document (the archive's: the
    // fixture's pending articles have moved on since the platform started).
    const got = await sqliteDocs(path.join(dataDir, "articles", "articles.sqlite"), "articles");
    expect(got.map((d) => d._id)).to.deep.equal(want.map((d) => d._id));
    const archived = (docs: NedbDocument[]) => docs.filter((d) => d._id.startsWith("archive-"));
    // Less the list order's keys, which the articles store gives every article of an older release at its first open.
    const unordered = (docs: NedbDocument[]) => docs.map(({ seq: _s, sortAt: _a, ...rest }) => rest);
    expect(unordered(archived(got))).to.deep.equal(archived(want));
    expect(await readdir(path.join(dataDir, "nedb-before-sqlite", "articles"))).to.include("articles.db");
    console.log(`      (${want.length} documents; killed after ${progress!.documents} were reported, ${partial} in the database; the restart finished the copy and was ready in ${restartMs} ms)`);
  });

  it("the auth and articles processes, started on their own, each upgrade their own directory", async () => {
    const dataDir = await nedbDataDir();
    dirs.push(dataDir);
    const run = (entry: string, env: Record<string, string>) => {
      const child = spawn(process.execPath, ["--import", "tsx", path.join(ROOT, entry)], {
        cwd: ROOT,
        env: { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: "info", INTERNAL_TOKEN: BASE_ENV.INTERNAL_TOKEN, ...env },
        stdio: ["ignore", "pipe", "inherit"],
      });
      const exited = new Promise((r) => child.once("exit", r));
      const listening = (async () => {
        for await (const line of createInterface({ input: child.stdout! })) {
          const entry = line.startsWith("{") ? JSON.parse(line) : {};
          if (String(entry.msg).endsWith(" listening")) return entry.url as string;
        }
        throw new Error(`${entry} exited before listening`);
      })();
      return { listening, stop: async () => (child.kill("SIGTERM"), await exited) };
    };
    const auth = run("services/auth/main.ts", { AUTH_PORT: "0" });
    const authUrl = await auth.listening;
    expect(await readdir(path.join(dataDir, "nedb-before-sqlite"))).to.deep.equal(["auth"]);
    expect(await readdir(path.join(dataDir, "articles"))).to.include("articles.db");
    const articles = run("services/articles/main.ts", { AUTH_URL: authUrl, ARTICLES_PORT: "0" });
    try {
      await articles.listening;
    } finally {
      await articles.stop();
      await auth.stop();
    }
    expect((await readdir(path.join(dataDir, "nedb-before-sqlite"))).sort()).to.deep.equal(["articles", "auth"]);
    expect((await sqliteDocs(path.join(dataDir, "auth", "auth.sqlite"), "tokens")).length).to.equal(5);
    expect((await sqliteDocs(path.join(dataDir, "articles", "articles.sqlite"), "articles")).map((d) => d._id)).to.include((await nedbManifest()).ids.revised);
  });

  it("stops start-up with an error naming DATA_DIR when the volume is too small, and changes nothing", async function () {
    const volume = mountSmallVolume(8 * 1024 * 1024);
    if (!volume) {
      if (process.env.CI) throw new Error("cannot mount a small volume (needs root)");
      return this.skip();
    }
    try {
      await cp(path.join(NEDB_FIXTURE, "data"), volume.dir, { recursive: true });
      const before = (await readdir(volume.dir, { recursive: true })).sort();
      const err = await startEmbedded({ ...BASE_ENV, DATA_DIR: volume.dir }, sink()).then(
        async (sys) => {
          await sys.close();
          expect.fail("started");
        },
        (e: Error) => e,
      );
      expect(err.name).to.equal("ConfigError");
      expect(err.message).to.contain(`DATA_DIR=${volume.dir}`).and.to.match(/free space/).and.to.match(/Nothing was changed/);
      expect((await readdir(volume.dir, { recursive: true })).sort()).to.deep.equal(before);
      for (const f of ["articles/articles.db", "auth/tokens.db"]) expect(await readFile(path.join(volume.dir, f), "utf8")).to.equal(await readFile(path.join(NEDB_FIXTURE, "data", f), "utf8"));
    } finally {
      volume.unmount();
    }
  });
});
