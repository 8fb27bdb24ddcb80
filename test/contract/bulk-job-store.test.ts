// The bulk-job store on both drivers: one running job per project, targets in
// order across chunks, and a lapsed lease taken over by exactly one runner.
import { expect } from "chai";
import { randomBytes } from "node:crypto";
import { mongoDb } from "../../lib/mongo.js";
import { openMongoJobStore, openEmbeddedJobStore } from "../../services/articles/jobs/open.js";
import { JobRunningError, MAX_KEPT_ERRORS, type JobStore } from "../../services/articles/jobs/port.js";
import { TARGET_CHUNK } from "../../services/articles/jobs/store.js";
import { requireMongo } from "../support/servers.js";

function bulkJobStoreContract(open: () => Promise<{ store: JobStore; another(): Promise<JobStore>; dispose(): Promise<void> }>): void {
  let store: JobStore;
  let another: () => Promise<JobStore>;
  let dispose: () => Promise<void>;
  beforeEach(async () => ({ store, another, dispose } = await open()));
  afterEach(async () => dispose?.());

  const ids = (n: number) => Array.from({ length: n }, (_, i) => `a${i}`);

  it("keeps one running job per project; a finished one lets the next start", async () => {
    const job = await store.create({ id: "j1", projectId: "p1", action: "delete", labels: [] }, ids(3), "me", Date.now() + 10_000);
    expect(job).to.include({ state: "running", total: 3, done: 0, failed: 0 });
    let refused: unknown;
    try {
      await store.create({ id: "j2", projectId: "p1", action: "delete", labels: [] }, ids(1), "me", Date.now() + 10_000);
    } catch (e) {
      refused = e;
    }
    expect(refused).to.be.instanceOf(JobRunningError);
    expect((refused as JobRunningError).jobId).to.equal("j1");
    // Another project is not held up.
    await store.create({ id: "j3", projectId: "p2", action: "delete", labels: [] }, ids(1), "me", Date.now() + 10_000);
    expect((await store.finish("j1", "me", "done", undefined))?.state).to.equal("done");
    await store.create({ id: "j2", projectId: "p1", action: "delete", labels: [] }, ids(1), "me", Date.now() + 10_000);
    expect(await store.get("p2", "j1")).to.equal(null);
  });

  it("hands the targets out in order across chunks", async () => {
    const all = ids(TARGET_CHUNK * 2 + 5);
    await store.create({ id: "j1", projectId: "p1", action: "regenerate", labels: [] }, all, "me", Date.now() + 10_000);
    expect(await store.targets("j1", 0, 3)).to.deep.equal(["a0", "a1", "a2"]);
    expect(await store.targets("j1", TARGET_CHUNK - 1, 3)).to.deep.equal(all.slice(TARGET_CHUNK - 1, TARGET_CHUNK + 2));
    expect(await store.targets("j1", all.length - 2, 50)).to.deep.equal(all.slice(-2));
    expect(await store.targets("j1", all.length, 50)).to.deep.equal([]);
  });

  it("records outcomes for the holder only, keeps the first errors, and stops a cancelled job's runner", async () => {
    await store.create({ id: "j1", projectId: "p1", action: "delete", labels: [] }, ids(MAX_KEPT_ERRORS + 10), "me", Date.now() + 10_000);
    expect(await store.step("j1", "someone-else", { ok: true }, Date.now() + 10_000)).to.equal(null);
    expect((await store.step("j1", "me", { ok: true }, Date.now() + 10_000))?.done).to.equal(1);
    for (let i = 0; i < MAX_KEPT_ERRORS + 2; i++) await store.step("j1", "me", { ok: false, error: { articleId: `a${i}`, error: "nope" } }, Date.now() + 10_000);
    const j = await store.get("p1", "j1");
    expect(j?.failed).to.equal(MAX_KEPT_ERRORS + 2);
    expect(j?.errors.length).to.equal(MAX_KEPT_ERRORS);
    const cancelled = await store.cancel("p1", "j1", "cancelled on request");
    expect(cancelled).to.include({ state: "cancelled", reason: "cancelled on request" });
    expect(await store.step("j1", "me", { ok: true }, Date.now() + 10_000)).to.equal(null);
    expect(await store.step("j1", "me", undefined, Date.now() + 10_000)).to.equal(null);
    // Cancelling again answers the job as it is.
    expect((await store.cancel("p1", "j1", "again"))?.reason).to.equal("cancelled on request");
    expect(await store.cancel("p2", "j1", "not yours")).to.equal(null);
  });

  it("lets exactly one of two runners take over a lapsed job, and none a held one", async () => {
    const now = Date.now();
    await store.create({ id: "j1", projectId: "p1", action: "delete", labels: [] }, ids(2), "gone", now - 1);
    await store.create({ id: "j2", projectId: "p2", action: "delete", labels: [] }, ids(2), "alive", now + 60_000);
    expect((await store.lapsed(now, 10)).map((j) => j.id)).to.deep.equal(["j1"]);
    const other = await another();
    const [a, b] = await Promise.all([store.claim("j1", "r1", now + 10_000, now), other.claim("j1", "r2", now + 10_000, now)]);
    expect([a, b].filter(Boolean).length).to.equal(1);
    expect(await store.claim("j2", "r1", now + 10_000, now)).to.equal(null);
    // A shutdown releases at once.
    await store.release("j2", "alive");
    expect((await store.lapsed(Date.now(), 10)).map((j) => j.id)).to.deep.equal(["j2"]);
  });
}

describe("bulk job store contract: SQLite", () => {
  bulkJobStoreContract(async () => {
    const store = await openEmbeddedJobStore();
    return { store, another: async () => store, dispose: () => store.close() };
  });
});

describe("bulk job store contract: MongoDB", function () {
  let url = "";
  const run = `jobs_contract_${Date.now().toString(36)}_${randomBytes(3).toString("hex")}`;
  let n = 0;
  before(async function () {
    url = await requireMongo(this);
  });
  bulkJobStoreContract(async () => {
    const db = await mongoDb(url, `${run}_${++n}`);
    return { store: await openMongoJobStore(db), another: () => openMongoJobStore(db), dispose: async () => void (await db.dropDatabase()) };
  });
});
