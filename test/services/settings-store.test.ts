// Project settings and counters in both auth store adapters: the daily limit
// and the credit balance hold under concurrent reservations.
import { expect } from "chai";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { mongoDb } from "../../lib/mongo.js";
import { openMongoAuthStore, openEmbeddedAuthStore } from "../../services/auth/store/open.js";
import type { AuthStore } from "../../services/auth/store/port.js";
import { requireMongo } from "../support/servers.js";

const DAY = "2026-11-22";
const NEXT_DAY = "2026-11-23";

function settingsContract(open: () => Promise<{ store: AuthStore; dispose(): Promise<void> }>) {
  let store: AuthStore;
  let dispose: () => Promise<void>;
  let n = 0;
  let P: string;

  beforeEach(async () => {
    ({ store, dispose } = await open());
    P = `proj-${++n}`;
    await store.createProject({ id: P, name: P });
  });
  afterEach(async () => {
    await store.close();
    await dispose();
  });

  const settings = (dailyLimit: number | null) => ({ dailyLimit, rules: {}, webhook: null });

  it("a project without settings is unbounded: reservations succeed and are counted per day", async () => {
    for (let i = 0; i < 3; i++) expect(await store.reserve(P, DAY, 1000)).to.deep.equal({ ok: true, creditChars: null, usedToday: i + 1 });
    const st = await store.getProjectState(P);
    expect(st).to.include({ creditChars: null, dailyLimit: null, usageDay: DAY, usedToday: 3 });
  });

  it("50 concurrent reservations against a daily limit of 10: exactly 10 succeed, the rest are limit_reached", async () => {
    await store.saveSettings(P, settings(10));
    const results = await Promise.all(Array.from({ length: 50 }, () => store.reserve(P, DAY, 100)));
    expect(results.filter((r) => r.ok)).to.have.length(10);
    expect(results.filter((r) => !r.ok).map((r) => !r.ok && r.reason)).to.deep.equal(Array(40).fill("limit_reached"));
    expect((await store.getProjectState(P))?.usedToday).to.equal(10);
  });

  it("the counter starts over on the next UTC day, and a replica with a late clock does not reset it", async () => {
    await store.saveSettings(P, settings(2));
    await store.reserve(P, DAY, 1);
    await store.reserve(P, DAY, 1);
    expect(await store.reserve(P, DAY, 1)).to.include({ ok: false, reason: "limit_reached" });
    expect(await store.reserve(P, NEXT_DAY, 1)).to.include({ ok: true, usedToday: 1 });
    // Yesterday's date from a skewed replica counts on the newer day instead of resetting it.
    expect(await store.reserve(P, DAY, 1)).to.include({ ok: true, usedToday: 2 });
    expect(await store.reserve(P, DAY, 1)).to.include({ ok: false, reason: "limit_reached" });
  });

  it("credit never goes negative: 50 concurrent debits of 30 against 1000 leave exactly 10", async () => {
    await store.saveSettings(P, settings(null), 1000);
    const results = await Promise.all(Array.from({ length: 50 }, () => store.reserve(P, DAY, 30)));
    expect(results.filter((r) => r.ok)).to.have.length(33);
    expect(results.filter((r) => !r.ok).every((r) => !r.ok && r.reason === "no_money")).to.equal(true);
    const st = await store.getProjectState(P);
    expect(st?.creditChars).to.equal(10);
    expect(st?.usedToday).to.equal(33);
  });

  it("a batch of reservations that fits is taken whole, each answered as if taken one by one", async () => {
    await store.saveSettings(P, settings(10), 1000);
    await store.reserve(P, DAY, 100);
    expect(await store.reserveMany(P, DAY, [100, 200, 50])).to.deep.equal([
      { ok: true, creditChars: 800, usedToday: 2 },
      { ok: true, creditChars: 600, usedToday: 3 },
      { ok: true, creditChars: 550, usedToday: 4 },
    ]);
    expect(await store.getProjectState(P)).to.include({ creditChars: 550, usedToday: 4 });
  });

  it("a batch at a bound reserves the first ones that fit, in order, and refuses the rest", async () => {
    await store.saveSettings(P, settings(3), 1000);
    const r = await store.reserveMany(P, DAY, [100, 100, 100, 100, 100]);
    expect(r.map((x) => (x.ok ? "ok" : x.reason))).to.deep.equal(["ok", "ok", "ok", "limit_reached", "limit_reached"]);
    await store.saveSettings(P, settings(null));
    const m = await store.reserveMany(P, DAY, [600, 500, 300]);
    // 700 left: the 600 fits, the 500 does not, the 300 no longer does either (100 left).
    expect(m.map((x) => (x.ok ? "ok" : x.reason))).to.deep.equal(["ok", "no_money", "no_money"]);
    expect(await store.getProjectState(P)).to.include({ creditChars: 100, usedToday: 4 });
  });

  it("reservations outside the daily limit (renders listeners started) debit credit but neither count nor are refused by the limit", async () => {
    await store.saveSettings(P, settings(2), 1000);
    await store.reserve(P, DAY, 100);
    await store.reserve(P, DAY, 100);
    expect(await store.reserve(P, DAY, 100)).to.include({ ok: false, reason: "limit_reached" });
    expect(await store.reserveMany(P, DAY, [100], false)).to.deep.equal([{ ok: true, creditChars: 700, usedToday: 2 }]);
    expect(await store.reserveMany(P, DAY, [200, 300, 400], false)).to.deep.equal([
      { ok: true, creditChars: 500, usedToday: 2 },
      { ok: true, creditChars: 200, usedToday: 2 },
      { ok: false, reason: "no_money", creditChars: 200, usedToday: 2 },
    ]);
    expect(await store.getProjectState(P)).to.include({ creditChars: 200, usedToday: 2 });
    // A new day: the limit's count starts over, and uncounted reservations leave it at 0.
    expect(await store.reserveMany(P, NEXT_DAY, [50], false)).to.deep.equal([{ ok: true, creditChars: 150, usedToday: 0 }]);
    expect(await store.reserve(P, NEXT_DAY, 50)).to.include({ ok: true, usedToday: 1 });
  });

  it("20 concurrent batches of 5 against a daily limit of 32: exactly 32 reserved, the balance debited by exactly theirs", async () => {
    await store.saveSettings(P, settings(32), 100_000);
    const batch = [10, 20, 30, 40, 50];
    const results = await Promise.all(Array.from({ length: 20 }, () => store.reserveMany(P, DAY, batch)));
    const reserved = results.flatMap((r) => r.map((x, i) => (x.ok ? batch[i] : 0)));
    expect(reserved.filter((c) => c > 0)).to.have.length(32);
    expect(results.flat().filter((r) => !r.ok).every((r) => !r.ok && r.reason === "limit_reached")).to.equal(true);
    const st = await store.getProjectState(P);
    expect(st?.usedToday).to.equal(32);
    expect(st?.creditChars).to.equal(100_000 - reserved.reduce((a, b) => a + b, 0));
  });

  it("names the limit first when both bounds refuse, and changes nothing when refusing", async () => {
    await store.saveSettings(P, settings(1), 50);
    expect(await store.reserve(P, DAY, 40)).to.include({ ok: true, creditChars: 10 });
    expect(await store.reserve(P, DAY, 40)).to.include({ ok: false, reason: "limit_reached", creditChars: 10 });
    await store.saveSettings(P, settings(5));
    expect(await store.reserve(P, DAY, 40)).to.include({ ok: false, reason: "no_money", creditChars: 10, usedToday: 1 });
  });

  it("adds credit and refunds only to a bounded balance; settings changes leave the balance alone", async () => {
    expect(await store.addCredit(P, 100)).to.deep.equal({ ok: false, reason: "unlimited" });
    expect(await store.addCredit("nope", 100)).to.deep.equal({ ok: false, reason: "not_found" });
    expect(await store.refund(P, 100)).to.equal(null);
    await store.saveSettings(P, settings(null), 0);
    expect(await store.addCredit(P, 100)).to.deep.equal({ ok: true, creditChars: 100 });
    await store.reserve(P, DAY, 60);
    await store.saveSettings(P, settings(3));
    expect((await store.getProjectState(P))?.creditChars).to.equal(40);
    expect(await store.refund(P, 60)).to.equal(100);
  });

  it("concurrent credit additions and debits add up exactly", async () => {
    await store.saveSettings(P, settings(null), 0);
    await Promise.all([
      ...Array.from({ length: 20 }, () => store.addCredit(P, 10)),
      ...Array.from({ length: 20 }, () => store.reserve(P, DAY, 10)),
    ]);
    const st = await store.getProjectState(P);
    expect(st!.creditChars).to.be.at.least(0);
    expect(st!.creditChars! + st!.usedToday * 10).to.equal(200);
  });
}

describe("Project settings store: SQLite", () => {
  settingsContract(async () => {
    const dir = await mkdtemp(join(tmpdir(), "settings-store-"));
    return { store: await openEmbeddedAuthStore(dir), dispose: () => rm(dir, { recursive: true, force: true }) };
  });
});

describe("Project settings store: MongoDB", function () {
  let url = "";
  const run = `settings_${Date.now().toString(36)}_${randomBytes(3).toString("hex")}`;
  let n = 0;
  before(async function () {
    url = await requireMongo(this);
  });
  settingsContract(async () => {
    const db = await mongoDb(url, `${run}_${++n}`);
    return { store: await openMongoAuthStore(db), dispose: async () => void (await db.dropDatabase()) };
  });
});
