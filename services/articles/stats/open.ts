// The statistics store the configuration selects, beside the article store:
// a table of the articles service's SQLite database, or the listening_stats collection.
import type { Db } from "mongodb";
import type { DataConfig } from "../../../lib/adapters.js";
import { mongoDb } from "../../../lib/mongo.js";
import { mongoCollection } from "../../../lib/store/mongo-collection.js";
import { openSqliteDatabase } from "../../../lib/store/sqlite-collection.js";
import { articlesDatabaseFile } from "../store/open.js";
import { openStatsStoreOn, type StatsDoc, type StatsStore } from "./store.js";

export async function openStatsStore(cfg: DataConfig): Promise<StatsStore> {
  if (cfg.MONGODB_URL) return openMongoStatsStore(await mongoDb(cfg.MONGODB_URL, cfg.MONGODB_DB));
  return openEmbeddedStatsStore(cfg.DATA_DIR);
}

/** Omit dataDir for a memory-only store. */
export async function openEmbeddedStatsStore(dataDir?: string): Promise<StatsStore> {
  const db = await openSqliteDatabase({ filename: articlesDatabaseFile(dataDir), what: "listening statistics" });
  try {
    return await openStatsStoreOn(db.collection<StatsDoc>("listening_stats"));
  } finally {
    await db.close();
  }
}

export function openMongoStatsStore(db: Db): Promise<StatsStore> {
  return openStatsStoreOn(mongoCollection<StatsDoc>(db, "listening_stats"));
}
