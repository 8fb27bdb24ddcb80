import { randomBytes } from "node:crypto";
import { mongoDb } from "../../lib/mongo.js";
import { mongoCollection } from "../../lib/store/mongo-collection.js";
import { openSqliteCollection } from "../../lib/store/sqlite-collection.js";
import { openStatsStoreOn, type StatsDoc } from "../../services/articles/stats/store.js";
import { requireMongo } from "../support/servers.js";
import { statsStoreContract } from "./stats-store.contract.js";

describe("StatsStore contract: SQLite", () => {
  statsStoreContract(async () => {
    const col = await openSqliteCollection<StatsDoc>("listening_stats", { what: "listening statistics" });
    return { store: await openStatsStoreOn(col), another: () => openStatsStoreOn(col), insertRaw: (d) => col.insertOne(d), dispose: async () => {} };
  });
});

describe("StatsStore contract: MongoDB", function () {
  let url = "";
  const run = `stats_contract_${Date.now().toString(36)}_${randomBytes(3).toString("hex")}`;
  let n = 0;
  before(async function () {
    url = await requireMongo(this);
  });
  statsStoreContract(async () => {
    const db = await mongoDb(url, `${run}_${++n}`);
    const open = () => openStatsStoreOn(mongoCollection<StatsDoc>(db, "listening_stats"));
    return { store: await open(), another: open, insertRaw: (d) => mongoCollection<StatsDoc>(db, "listening_stats").insertOne(d), dispose: async () => void (await db.dropDatabase()) };
  });
});
