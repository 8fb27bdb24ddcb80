// The statistics store the configuration selects, beside the article store:
// a NeDB file under DATA_DIR/articles, or the listening_stats collection.
import path from "node:path";
import type { Db } from "mongodb";
import type { DataConfig } from "../../../lib/adapters.js";
import { mongoDb } from "../../../lib/mongo.js";
import { mongoCollection } from "../../../lib/store/mongo-collection.js";
import { openNedbCollection } from "../../../lib/store/nedb-collection.js";
import { openStatsStoreOn, type StatsDoc, type StatsStore } from "./store.js";

export async function openStatsStore(cfg: DataConfig): Promise<StatsStore> {
  if (cfg.MONGODB_URL) return openMongoStatsStore(await mongoDb(cfg.MONGODB_URL, cfg.MONGODB_DB));
  return openNedbStatsStore(cfg.DATA_DIR);
}

/** Omit dataDir for a memory-only store. */
export async function openNedbStatsStore(dataDir?: string): Promise<StatsStore> {
  const col = await openNedbCollection<StatsDoc>({
    filename: dataDir ? path.join(dataDir, "articles", "listening-stats.db") : undefined,
    compactEveryMs: dataDir ? 10 * 60_000 : undefined,
  });
  return openStatsStoreOn(col);
}

export function openMongoStatsStore(db: Db): Promise<StatsStore> {
  return openStatsStoreOn(mongoCollection<StatsDoc>(db, "listening_stats"));
}
