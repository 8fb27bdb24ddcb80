// Run as its own process by test/unit/sqlite-binding.test.ts: a store whose statement cache
// turns over many times, with awaited file reads and garbage between queries, so that the
// dropped statements are collected by GCs that run outside any JavaScript call. Prints
// "churned N statements" and exits 0 unless the binding aborts the process.
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { openSqliteDatabase } from "../../lib/store/sqlite-collection.js";

const rounds = Number(process.argv[2] ?? 1500);
const dir = await mkdtemp(path.join(tmpdir(), "sqlite-churn-"));
const db = await openSqliteDatabase({ filename: path.join(dir, "churn.sqlite"), what: "churn test" });
const docs = db.collection<{ _id: string; n: number }>("docs");
for (let i = 0; i < 64; i++) await docs.insertOne({ _id: `d${i}`, n: i });
let found = 0;
for (let k = 0; k < rounds; k++) {
  // An $in list of a new length is a new SQL text, hence a new prepared statement.
  const ids = Array.from({ length: (k % 700) + 1 }, (_, i) => `d${i % 64}-${k}`);
  found += (await docs.find({ _id: { $in: [...ids, `d${k % 64}`] } })).length;
  await readFile(new URL(import.meta.url));
  if (k % 50 === 0) await new Promise((r) => setTimeout(r, 1));
  const junk: object[] = [];
  for (let i = 0; i < 20_000; i++) junk.push({ i });
}
await db.close();
await rm(dir, { recursive: true, force: true });
console.log(`churned ${rounds} statements, found ${found}`);
