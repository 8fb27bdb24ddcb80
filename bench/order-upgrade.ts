// Issue 35 benchmark: what the list order costs an archive stored by an older release, on the
// embedded default. The first open of the articles store answers at once and gives every article
// its order keys in the background (order-upgrade.ts: pages of ids, each one UPDATE computed in
// SQLite), then builds the four list indexes on them. Seeded here with BENCH_ORDER_N articles
// (default 1,000,000) as the previous release stored them, with its indexes; then timed: (a) how
// long the open keeps start-up waiting, (b) the background pass, (c) the index builds after it.
// Reference in the same run: a plain walk over the same rows by id that reads every document and
// writes nothing, the least any pass over the archive costs.
// Run: npm run bench:order-upgrade (BENCH_ORDER_N=100000 for a quicker look).
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { sqliteDriver } from "../lib/store/sqlite-binding.js";
import { openSqliteDatabase } from "../lib/store/sqlite-collection.js";
import { embeddedLayout, type ArticleDoc } from "../services/articles/store/layout.js";
import { articlesDatabaseFile } from "../services/articles/store/open.js";
import { TEXT_FIELDS } from "../services/articles/store/port.js";
import { upgradeOrder } from "../services/articles/store/order-upgrade.js";

const HERE = dirname(fileURLToPath(import.meta.url));
const N = Number((process.env.BENCH_ORDER_N ?? "1000000").replace(/_/g, ""));
const NEW_INDEXES = new Set(["project_order", "project_order_label", "project_status_order", "project_status_order_label"]);
const TEXT = "The council met on Tuesday to agree the budget for the coming year, and the library stays open. ".repeat(10);

/** The previous release's rows, written straight into its table (as it left them: no order keys). */
function seed(file: string): void {
  mkdirSync(dirname(file), { recursive: true });
  const Driver = sqliteDriver();
  const db = new Driver(file);
  db.pragma("page_size = 16384");
  db.pragma("journal_mode = WAL");
  db.exec('CREATE TABLE IF NOT EXISTS "c_articles" (_id TEXT PRIMARY KEY NOT NULL, doc TEXT NOT NULL, z BLOB)');
  const insert = db.prepare('INSERT INTO "c_articles" (_id, doc, z) VALUES (?, ?, NULL)');
  const start = 1_700_000_000;
  const batch = db.transaction((from: number, to: number) => {
    for (let i = from; i < to; i++) {
      const added = start + Math.floor(i / 50);
      const doc = {
        projectId: `p${i % 20}`,
        title: `Archive article ${i}`,
        text: TEXT,
        isRaw: false,
        parse: false,
        voice: "alloy",
        lang: "en-US",
        types: [],
        labels: i % 3 === 0 ? ["news"] : [],
        status: "ready",
        revision: 1,
        added,
        updated: added,
        errors: [],
        changedAt: added * 1000,
        deleted: false,
      };
      insert.run(`archive-article-${i}-${(i * 2654435761 >>> 0).toString(36)}`, JSON.stringify(doc));
    }
  });
  for (let i = 0; i < N; i += 50_000) batch(i, Math.min(N, i + 50_000));
  db.pragma("wal_checkpoint(TRUNCATE)");
  db.close();
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(os.tmpdir(), "order-upgrade-"));
  try {
    const file = articlesDatabaseFile(dir)!;
    let t = Date.now();
    seed(file);
    const seedS = (Date.now() - t) / 1000;
    const db = await openSqliteDatabase({ filename: file, what: "articles" });
    const col = db.collection<ArticleDoc>("articles", process.env.BENCH_ORDER_UNPACKED ? {} : { packed: TEXT_FIELDS });
    // The previous release's indexes (its listing by `added`, its label tables), kept up by every write of the pass.
    t = Date.now();
    for (const [spec, o] of embeddedLayout.indexes) if (!NEW_INDEXES.has(spec.name)) await col.ensureIndex(spec, o);
    for (const [name, keys] of [
      ["project_listing_label", { projectId: 1, deleted: 1, labels: 1, added: 1, _id: 1 }],
      ["project_ready_label", { projectId: 1, status: 1, labels: 1, added: 1, _id: 1 }],
    ] as const) {
      await col.ensureIndex({ name, keys: { ...keys } }, { multikey: "labels" });
    }
    const oldIndexesS = (Date.now() - t) / 1000;

    // Reference: a walk by id reading every document, writing nothing.
    t = Date.now();
    let read = 0;
    for (let after = ""; ; ) {
      const page = await col.find(after ? { _id: { $gt: after } } : {}, { projection: { _id: 1, added: 1, published: 1, seq: 1 }, sort: { _id: 1 }, limit: 1000 });
      read += page.length;
      if (page.length < 1000) break;
      after = page[page.length - 1]._id;
    }
    const walkS = (Date.now() - t) / 1000;

    // As the store opens: start-up waits for upgradeOrder, the rest runs in the background.
    const marks = db.collection<never>("pronunciations");
    t = Date.now();
    const upgrade = await upgradeOrder(col, marks, embeddedLayout, () => false);
    const readyS = (Date.now() - t) / 1000;
    await upgrade.keyed;
    const passS = (Date.now() - t) / 1000 - readyS;
    const passEnded = Date.now();
    await upgrade.done;
    const indexS = (Date.now() - passEnded) / 1000;
    await marks.close();
    await col.close();
    await db.close();
    const dataMB = statSync(file).size / 1e6;
    const figures = {
      articles: N,
      read,
      seedSeconds: seedS,
      oldIndexesSeconds: oldIndexesS,
      walkSeconds: walkS,
      readySeconds: readyS,
      passSeconds: passS,
      newIndexesSeconds: indexS,
      upgradeSeconds: passS + indexS,
      passRatio: passS / walkS,
      microsecondsPerArticle: ((passS + indexS) * 1e6) / N,
      dataMB,
      loadAverage: os.loadavg()[0],
    };
    console.log(
      `order upgrade, embedded default, ${N.toLocaleString("en")} articles of a previous release: start-up waited ${readyS.toFixed(2)} s; in the background, the pass giving them their order keys ${passS.toFixed(1)} s ` +
        `(× ${figures.passRatio.toFixed(1)} a read-only walk over the same rows, ${walkS.toFixed(1)} s), the four list indexes built on them ${indexS.toFixed(1)} s; ` +
        `${(passS + indexS).toFixed(1)} s in all, ${figures.microsecondsPerArticle.toFixed(0)} µs per article (database ${dataMB.toFixed(0)} MB, load ${figures.loadAverage.toFixed(1)})`,
    );
    mkdirSync(join(HERE, "results"), { recursive: true });
    writeFileSync(join(HERE, "results", "order-upgrade.json"), `${JSON.stringify(figures, null, 2)}\n`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
