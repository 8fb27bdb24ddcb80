// The sources store the configuration selects: two collections beside the
// articles (MongoDB when MONGODB_URL is set, else the articles service's SQLite database).
import type { Db } from "mongodb";
import type { DataConfig } from "../../../lib/adapters.js";
import { mongoDb } from "../../../lib/mongo.js";
import { mongoCollection } from "../../../lib/store/mongo-collection.js";
import { openSqliteDatabase } from "../../../lib/store/sqlite-collection.js";
import { articlesDatabaseFile } from "../store/open.js";
import type { SourceDoc, SourceItemDoc, SourceStore } from "./port.js";
import { openSourceStoreOn } from "./store.js";

export async function openSourceStore(cfg: DataConfig): Promise<SourceStore> {
  if (cfg.MONGODB_URL) return openMongoSourceStore(await mongoDb(cfg.MONGODB_URL, cfg.MONGODB_DB));
  return openEmbeddedSourceStore(cfg.DATA_DIR);
}

/** Omit dataDir for a memory-only store. */
export async function openEmbeddedSourceStore(dataDir?: string): Promise<SourceStore> {
  const db = await openSqliteDatabase({ filename: articlesDatabaseFile(dataDir), what: "sources" });
  try {
    return await openSourceStoreOn(db.collection<SourceDoc>("sources"), db.collection<SourceItemDoc>("source_items"));
  } finally {
    await db.close();
  }
}

export function openMongoSourceStore(db: Db): Promise<SourceStore> {
  return openSourceStoreOn(mongoCollection<SourceDoc>(db, "sources"), mongoCollection<SourceItemDoc>(db, "source_items"));
}
