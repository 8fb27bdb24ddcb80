// The bulk-job store the configuration selects, beside the article store:
// two tables of the articles service's SQLite database, or two MongoDB collections.
import type { Db } from "mongodb";
import type { DataConfig } from "../../../lib/adapters.js";
import { mongoDb } from "../../../lib/mongo.js";
import { mongoCollection } from "../../../lib/store/mongo-collection.js";
import { openSqliteDatabase } from "../../../lib/store/sqlite-collection.js";
import { articlesDatabaseFile } from "../store/open.js";
import type { JobStore } from "./port.js";
import { openJobStoreOn, type JobDoc, type TargetDoc } from "./store.js";

export async function openJobStore(cfg: DataConfig): Promise<JobStore> {
  if (cfg.MONGODB_URL) return openMongoJobStore(await mongoDb(cfg.MONGODB_URL, cfg.MONGODB_DB));
  return openEmbeddedJobStore(cfg.DATA_DIR);
}

/** Omit dataDir for a memory-only store. */
export async function openEmbeddedJobStore(dataDir?: string): Promise<JobStore> {
  const db = await openSqliteDatabase({ filename: articlesDatabaseFile(dataDir), what: "bulk jobs" });
  try {
    return await openJobStoreOn(db.collection<JobDoc>("bulk_jobs"), db.collection<TargetDoc>("bulk_job_targets"));
  } finally {
    await db.close();
  }
}

export function openMongoJobStore(db: Db, prefix = "articles"): Promise<JobStore> {
  return openJobStoreOn(mongoCollection<JobDoc>(db, `${prefix}_bulk_jobs`), mongoCollection<TargetDoc>(db, `${prefix}_bulk_job_targets`));
}
