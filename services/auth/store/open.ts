// The auth store the configuration selects: MongoDB when MONGODB_URL is set,
// otherwise the embedded SQLite database under DATA_DIR.
import { join } from "node:path";
import type { Db } from "mongodb";
import type { DataConfig } from "../../../lib/adapters.js";
import { mongoDb } from "../../../lib/mongo.js";
import { mongoCollection } from "../../../lib/store/mongo-collection.js";
import { openSqliteDatabase } from "../../../lib/store/sqlite-collection.js";
import type { AuthStore } from "./port.js";
import { openAuthStoreOn, type OembedClaimDoc, type ProjectDoc, type TokenDoc } from "./store.js";

export async function openAuthStore(cfg: DataConfig): Promise<AuthStore> {
  return cfg.MONGODB_URL ? openMongoAuthStore(await mongoDb(cfg.MONGODB_URL, cfg.MONGODB_DB)) : openEmbeddedAuthStore(cfg.DATA_DIR);
}

/** One database, `<dataDir>/auth/auth.sqlite`, for projects (with their settings), tokens and oEmbed host claims. */
export async function openEmbeddedAuthStore(dataDir: string): Promise<AuthStore> {
  const db = await openSqliteDatabase({ filename: join(dataDir, "auth", "auth.sqlite"), what: "auth" });
  try {
    return await openAuthStoreOn({
      projects: db.collection<ProjectDoc>("projects"),
      tokens: db.collection<TokenDoc>("tokens"),
      oembedClaims: db.collection<OembedClaimDoc>("oembed_claims"),
    });
  } finally {
    await db.close();
  }
}

export function openMongoAuthStore(db: Db): Promise<AuthStore> {
  return openAuthStoreOn({
    projects: mongoCollection<ProjectDoc>(db, "auth_projects"),
    tokens: mongoCollection<TokenDoc>(db, "auth_tokens"),
    oembedClaims: mongoCollection<OembedClaimDoc>(db, "auth_oembed_claims"),
  });
}
