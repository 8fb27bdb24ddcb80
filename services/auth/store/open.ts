// The auth store the configuration selects: MongoDB when MONGODB_URL is set,
// otherwise the embedded NeDB files under DATA_DIR.
import type { DataConfig } from "../../../lib/adapters.js";
import { mongoDb } from "../../../lib/mongo.js";
import { openMongoAuthStore } from "./mongo.js";
import { openNedbAuthStore } from "./nedb.js";
import type { AuthStore } from "./port.js";

export async function openAuthStore(cfg: DataConfig): Promise<AuthStore> {
  return cfg.MONGODB_URL ? openMongoAuthStore(await mongoDb(cfg.MONGODB_URL, cfg.MONGODB_DB)) : openNedbAuthStore(cfg.DATA_DIR);
}
