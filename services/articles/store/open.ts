// The article store the configuration selects: MongoDB when MONGODB_URL is
// set, otherwise the embedded NeDB file under DATA_DIR.
import path from "node:path";
import type { Db } from "mongodb";
import type { DataConfig } from "../../../lib/adapters.js";
import { mongoDb } from "../../../lib/mongo.js";
import { mongoCollection } from "../../../lib/store/mongo-collection.js";
import { openNedbCollection } from "../../../lib/store/nedb-collection.js";
import { mongoLayout, nedbLayout, type ArticleDoc } from "./layout.js";
import type { ArticleStore } from "./port.js";
import { openArticleStoreOn, type PronunciationDoc } from "./store.js";

export async function openArticleStore(cfg: DataConfig): Promise<ArticleStore> {
  return cfg.MONGODB_URL ? openMongoArticleStore(await mongoDb(cfg.MONGODB_URL, cfg.MONGODB_DB)) : openNedbArticleStore({ dataDir: cfg.DATA_DIR });
}

export interface NedbArticleStoreOptions {
  /** Root data directory; the file lives in `<dataDir>/articles/`. Omit for an in-memory store. */
  dataDir?: string;
  /** Rewrites the append-only datafile periodically; default 10 minutes. */
  compactEveryMs?: number;
  /** false: acknowledge writes before fdatasync; only the benchmark's reference uses it. */
  durable?: boolean;
}

export async function openNedbArticleStore(opts: NedbArticleStoreOptions = {}): Promise<ArticleStore> {
  const col = await openNedbCollection<ArticleDoc>({
    filename: opts.dataDir ? path.join(opts.dataDir, "articles", "articles.db") : undefined,
    compactEveryMs: opts.compactEveryMs ?? 10 * 60_000,
    what: "articles",
    durable: opts.durable,
  });
  const rules = await openNedbCollection<PronunciationDoc>({
    filename: opts.dataDir ? path.join(opts.dataDir, "articles", "pronunciations.db") : undefined,
    compactEveryMs: opts.compactEveryMs ?? 10 * 60_000,
  });
  return openArticleStoreOn(col, nedbLayout, rules);
}

export function openMongoArticleStore(db: Db, collection = "articles"): Promise<ArticleStore> {
  return openArticleStoreOn(mongoCollection<ArticleDoc>(db, collection), mongoLayout, mongoCollection<PronunciationDoc>(db, `${collection}_pronunciations`));
}
