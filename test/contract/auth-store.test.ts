import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { mongoDb } from "../../lib/mongo.js";
import { openMongoAuthStore, openEmbeddedAuthStore } from "../../services/auth/store/open.js";
import { requireMongo } from "../support/servers.js";
import { authStoreContract } from "./auth-store.contract.js";

describe("AuthStore contract: SQLite", () => {
  authStoreContract(async () => {
    const dir = await mkdtemp(join(tmpdir(), "auth-store-"));
    return {
      open: () => openEmbeddedAuthStore(dir),
      dispose: () => rm(dir, { recursive: true, force: true }),
    };
  });
});

describe("AuthStore contract: MongoDB", function () {
  let url = "";
  const run = `auth_contract_${Date.now().toString(36)}_${randomBytes(3).toString("hex")}`;
  let n = 0;

  before(async function () {
    url = await requireMongo(this);
  });

  authStoreContract(async () => {
    // A database per test keeps tests independent; each is dropped afterwards.
    // The shared client stays open: other suites in this process may use it.
    const db = await mongoDb(url, `${run}_${++n}`);
    return {
      open: () => openMongoAuthStore(db),
      dispose: async () => {
        await db.dropDatabase();
      },
    };
  });
});
