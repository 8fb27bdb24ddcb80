// The auth store the configuration selects: MongoDB when MONGODB_URL is set,
// otherwise the embedded NeDB files under DATA_DIR.
import { join } from "node:path";
import type { Db } from "mongodb";
import type { DataConfig } from "../../../lib/adapters.js";
import { mongoDb } from "../../../lib/mongo.js";
import { mongoCollection } from "../../../lib/store/mongo-collection.js";
import { openNedbCollection } from "../../../lib/store/nedb-collection.js";
import type { AuthStore } from "./port.js";
import { openAuthStoreOn, type OembedClaimDoc, type ProjectDoc, type TokenDoc } from "./store.js";

export async function openAuthStore(cfg: DataConfig): Promise<AuthStore> {
  return cfg.MONGODB_URL ? openMongoAuthStore(await mongoDb(cfg.MONGODB_URL, cfg.MONGODB_DB)) : openNedbAuthStore(cfg.DATA_DIR);
}

/** Append-only files under `<dataDir>/auth/`; NeDB keeps them in memory, which suits a few projects and tokens. */
export async function openNedbAuthStore(dataDir: string): Promise<AuthStore> {
  const dir = join(dataDir, "auth");
  const [projects, tokens, oembedClaims] = await Promise.all([
    openNedbCollection<ProjectDoc>({ filename: join(dir, "projects.db"), what: "projects" }),
    openNedbCollection<TokenDoc>({ filename: join(dir, "tokens.db"), what: "tokens" }),
    openNedbCollection<OembedClaimDoc>({ filename: join(dir, "oembed-claims.db"), what: "oEmbed host claims" }),
  ]);
  return openAuthStoreOn({ projects, tokens, oembedClaims });
}

export function openMongoAuthStore(db: Db): Promise<AuthStore> {
  return openAuthStoreOn({
    projects: mongoCollection<ProjectDoc>(db, "auth_projects"),
    tokens: mongoCollection<TokenDoc>(db, "auth_tokens"),
    oembedClaims: mongoCollection<OembedClaimDoc>(db, "auth_oembed_claims"),
  });
}
