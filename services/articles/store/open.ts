// The article store the configuration selects: MongoDB when MONGODB_URL is
// set, otherwise the embedded SQLite database under DATA_DIR.
import path from "node:path";
import type { Db } from "mongodb";
import type { DataConfig } from "../../../lib/adapters.js";
import { mongoDb } from "../../../lib/mongo.js";
import { mongoCollection } from "../../../lib/store/mongo-collection.js";
import { openSqliteDatabase } from "../../../lib/store/sqlite-collection.js";
import { NEDB_RELEASE, type NedbUpgradePlan } from "../../../lib/store/nedb-upgrade.js";
import { mongoLayout, embeddedLayout, type ArticleDoc } from "./layout.js";
import { TEXT_FIELDS, type ArticleStore } from "./port.js";
import { openArticleStoreOn, type PronunciationDoc } from "./store.js";

export async function openArticleStore(cfg: DataConfig): Promise<ArticleStore> {
  return cfg.MONGODB_URL ? openMongoArticleStore(await mongoDb(cfg.MONGODB_URL, cfg.MONGODB_DB)) : openEmbeddedArticleStore({ dataDir: cfg.DATA_DIR });
}

/** The NeDB release's articles data, copied into articles stored as this store stores them (the text packed). */
export const ARTICLES_UPGRADE: NedbUpgradePlan = { ...NEDB_RELEASE.articles, packed: { articles: TEXT_FIELDS } };

/** The articles service's database: articles, pronunciation rules and listening statistics. Omit dataDir for one in memory. */
export const articlesDatabaseFile = (dataDir: string | undefined) => (dataDir ? path.join(dataDir, "articles", "articles.sqlite") : undefined);

export interface EmbeddedArticleStoreOptions {
  /** Root data directory; the database lives in `<dataDir>/articles/`. Omit for an in-memory store. */
  dataDir?: string;
  /** false: acknowledge writes before they reach the disk; only the benchmark's reference uses it. */
  durable?: boolean;
  /** false: no search index, as a release before search (the search bench builds its archive so, to time the upgrade). */
  search?: boolean;
}

export async function openEmbeddedArticleStore(opts: EmbeddedArticleStoreOptions = {}): Promise<ArticleStore> {
  const db = await openSqliteDatabase({ filename: articlesDatabaseFile(opts.dataDir), what: "articles", durable: opts.durable });
  try {
    return await openArticleStoreOn(db.collection<ArticleDoc>("articles", { packed: TEXT_FIELDS }), embeddedLayout, db.collection<PronunciationDoc>("pronunciations"), { search: opts.search });
  } finally {
    // The collections keep the database open until the store closes them.
    await db.close();
  }
}

export function openMongoArticleStore(db: Db, collection = "articles"): Promise<ArticleStore> {
  return openArticleStoreOn(mongoCollection<ArticleDoc>(db, collection), mongoLayout, mongoCollection<PronunciationDoc>(db, `${collection}_pronunciations`));
}
