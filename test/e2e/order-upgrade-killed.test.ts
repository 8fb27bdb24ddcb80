// The list order's background pass (services/articles/store/order-upgrade.ts) killed with
// SIGKILL in the middle, as a crash or an impatient operator would: the next start goes on from
// the stored position and ends with every article keyed right and the list indexes built.
import { expect } from "chai";
import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { sqliteDriver } from "../../lib/store/sqlite-binding.js";
import { openSqliteDatabase } from "../../lib/store/sqlite-collection.js";
import { embeddedLayout, type ArticleDoc } from "../../services/articles/store/layout.js";
import { LIST_SORT, seqOfAdded } from "../../services/articles/store/order.js";
import { upgradeOrder } from "../../services/articles/store/order-upgrade.js";
import { TEXT_FIELDS } from "../../services/articles/store/port.js";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const N = 40_000;
const PAGE = 100;

/** N articles as the release before the list order left them: no keys, 50 per creation second. */
function seed(file: string): void {
  const db = new (sqliteDriver())(file);
  db.pragma("journal_mode = WAL");
  db.exec('CREATE TABLE "c_articles" (_id TEXT PRIMARY KEY NOT NULL, doc TEXT NOT NULL, z BLOB)');
  const insert = db.prepare('INSERT INTO "c_articles" (_id, doc, z) VALUES (?, ?, NULL)');
  db.transaction(() => {
    for (let i = 0; i < N; i++) {
      const added = 1_700_000_000 + Math.floor(i / 50);
      const doc = { projectId: `p${i % 4}`, title: `Archive ${i}`, text: "Archived words.", isRaw: false, parse: false, voice: "alloy", lang: "en-US", types: [], labels: [], status: "ready", revision: 1, added, updated: added, errors: [], changedAt: added * 1000, deleted: false };
      insert.run(`archive-${String(i).padStart(6, "0")}`, JSON.stringify(doc));
    }
  })();
  db.close();
}

/** How many articles have their keys, and the pass's stored position, read beside the writer. */
function peek(file: string): { keyed: number; given?: number } {
  const db = new (sqliteDriver())(file, { readonly: true });
  try {
    const keyed = db.prepare(`SELECT count(*) FROM c_articles WHERE json_extract(doc, '$.seq') IS NOT NULL`).pluck().get() as number;
    const hasMarks = db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'c_pronunciations'").get() !== undefined;
    const at = hasMarks ? (db.prepare("SELECT doc FROM c_pronunciations WHERE _id = ?").pluck().get("\u0000progress:order") as string | undefined) : undefined;
    return { keyed, given: at ? (JSON.parse(at) as { given: number }).given : undefined };
  } finally {
    db.close();
  }
}

describe("list order upgrade killed mid-way (SIGKILL)", function () {
  this.timeout(300_000);

  it("goes on from its stored position at the next start and ends with every article keyed right", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "order-killed-"));
    const file = path.join(dir, "articles.sqlite");
    try {
      seed(file);
      const child = spawn(process.execPath, ["--import", "tsx", path.join(ROOT, "test/support/order-upgrade-child.ts"), file, String(PAGE)], { cwd: ROOT, stdio: ["ignore", "pipe", "inherit"] });
      const exited = new Promise<NodeJS.Signals | null>((r) => child.once("exit", (_code, signal) => r(signal)));
      const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
      expect((await lines.next()).value).to.equal("ready");
      // Killed once a few pages are stored, well before the pass can end (N / PAGE pages).
      let seen = peek(file);
      while ((seen.given ?? 0) < PAGE * 5) {
        await new Promise((r) => setTimeout(r, 20));
        seen = peek(file);
      }
      child.kill("SIGKILL");
      expect(await exited).to.equal("SIGKILL");
      const killed = peek(file);
      expect(killed.keyed, "killed during the pass (it ended first: make the archive larger)").to.be.within(PAGE * 5, N - 1);

      const db = await openSqliteDatabase({ filename: file, what: "articles" });
      const col = db.collection<ArticleDoc>("articles", { packed: TEXT_FIELDS });
      const marks = db.collection<never>("pronunciations");
      try {
        const again = await upgradeOrder(col, marks, embeddedLayout, () => false, PAGE);
        expect(again.ordered()).to.equal(false);
        await again.done;
        expect(again.ordered()).to.equal(true);
        const docs = await col.find({}, { projection: { _id: 1, added: 1, seq: 1, sortAt: 1 } });
        expect(docs).to.have.length(N);
        const wrong = docs.filter((d) => d.seq !== seqOfAdded(d.added) || d.sortAt !== d.added * 1000);
        expect(wrong.length).to.equal(0);
        // Given once each: a page the kill left unrecorded is walked again and changes nothing.
        const { given } = peek(file);
        expect(given).to.be.within(N - PAGE, N);
        // The list indexes exist and serve the list order.
        const newest = await col.find({ projectId: "p3", deleted: false }, { sort: LIST_SORT, limit: 2, projection: { _id: 1 } });
        expect(newest.map((d) => d._id)).to.deep.equal(["archive-039999", "archive-039995"]);
      } finally {
        await col.close();
        await marks.close();
        await db.close();
      }
      console.log(`      (${N} articles; killed with ${killed.keyed} keyed, position at ${killed.given})`);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
