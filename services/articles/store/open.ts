// The article store the configuration selects: MongoDB when MONGODB_URL is
// set, otherwise the embedded NeDB files under DATA_DIR.
import type { DataConfig } from "../../../lib/adapters.js";
import { mongoDb } from "../../../lib/mongo.js";
import { openMongoArticleStore } from "./mongo.js";
import { openNedbArticleStore } from "./nedb.js";
import type { ArticleStore } from "./port.js";

export async function openArticleStore(cfg: DataConfig): Promise<ArticleStore> {
  return cfg.MONGODB_URL ? openMongoArticleStore(await mongoDb(cfg.MONGODB_URL, cfg.MONGODB_DB)) : openNedbArticleStore({ dataDir: cfg.DATA_DIR });
}
