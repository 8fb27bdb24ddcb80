// Issue 22, point 3: on MongoDB no list page and no periodic path of the
// articles service costs in proportion to the archive. Seen with the driver's
// command monitoring: no aggregate or count command at all, and every filter
// sent has an index the store created whose keys are its equality fields and
// then its sort (the stand-in does not explain queries, so shapes are compared).
// The counts behind list totals and the status metric stay exact through
// creates, edits, deletions, status changes and racing writers, on an upgraded
// collection too.
import { expect } from "chai";
import type { CommandStartedEvent, Db, Document } from "mongodb";
import { logger } from "../../lib/log.js";
import { closeMongo, mongoDb, watchMongoCommands } from "../../lib/mongo.js";
import { periodicRecrawl } from "../../services/articles/admission/recrawl.js";
import { UNBOUNDED } from "../../services/articles/admission/settings.js";
import { startReconciler } from "../../services/articles/reconciler.js";
import { openMongoArticleStore } from "../../services/articles/store/open.js";
import { ARTICLE_STATUSES, DEFERRED_STATUSES, type ArticleStatus, type ArticleStore } from "../../services/articles/store/port.js";
import { recordingBus } from "../support/recording-bus.js";
import { requireMongo } from "../support/servers.js";
import { draft } from "./article-store.contract.js";

const HIDDEN = new Set(["_tallyOf", "_tallyBuilt", "_tallyGhost", "_tally"]);

interface Shape {
  eq: Set<string>;
  range: Set<string>;
}

/** Equality ($in too: MongoDB merges the sorted runs) and range fields of a filter; the rest is checked on the fetched documents. */
function shapeOf(filter: Document): Shape {
  const shape: Shape = { eq: new Set(), range: new Set() };
  for (const [k, v] of Object.entries(filter)) {
    // The driver keeps its counters out of every query with {$exists: false} on their fields.
    if (k.startsWith("$") || (HIDDEN.has(k) && typeof v === "object" && v !== null && "$exists" in v)) continue;
    const ops = v !== null && typeof v === "object" && !Array.isArray(v) && !(v instanceof Date) ? Object.keys(v as object) : [];
    if (!ops.some((o) => o.startsWith("$")) || ops.includes("$eq") || ops.includes("$in")) shape.eq.add(k);
    else if (ops.some((o) => ["$gt", "$gte", "$lt", "$lte"].includes(o))) shape.range.add(k);
  }
  return shape;
}

/** The index walks a bounded range: its leading keys are fixed by the filter, and the sort (if any) follows them in the index. */
function serves(keys: Array<[string, number]>, filter: Document, sort: Document | undefined): boolean {
  const { eq, range } = shapeOf(filter);
  let i = 0;
  while (i < keys.length && eq.has(keys[i][0])) i++;
  if (i === 0 && !range.has(keys[0][0])) return false;
  if (!sort) return true;
  const wanted = Object.entries(sort) as Array<[string, number]>;
  const next = keys.slice(i, i + wanted.length);
  if (next.length < wanted.length || next.some(([k], j) => k !== wanted[j][0])) return false;
  const same = next.every(([, d], j) => d === wanted[j][1]);
  const reversed = next.every(([, d], j) => d === -wanted[j][1]);
  return same || reversed;
}

const base = draft;

describe("article store on MongoDB: query shapes and exact counts", function () {
  this.timeout(120_000);
  let db: Db;
  let url = "";
  let commands: CommandStartedEvent[] | undefined;
  const dbName = `shapes_${process.pid}_${Date.now().toString(36)}`;

  before(async function () {
    url = await requireMongo(this);
    watchMongoCommands((e) => commands?.push(e));
    try {
      // A client of its own, monitored (other suites share the plain URL's).
      db = await mongoDb(`${url}${url.includes("?") ? "&" : "?"}appName=shapes`, dbName);
    } finally {
      watchMongoCommands(undefined);
    }
  });
  after(async () => {
    await db?.dropDatabase();
    await closeMongo();
  });

  /** Runs `fn` and answers every command it sent to the collection. */
  async function recorded(fn: () => Promise<unknown>): Promise<CommandStartedEvent[]> {
    commands = [];
    try {
      await fn();
      return commands;
    } finally {
      commands = undefined;
    }
  }

  /** Fails on any aggregate or count, and on a filter without an index of its shape. */
  async function expectIndexed(collection: string, sent: CommandStartedEvent[]) {
    const indexes = (await db.collection(collection).indexes()).map((i) => Object.entries(i.key) as Array<[string, number]>);
    expect(sent.length, "no command recorded").to.be.greaterThan(0);
    for (const e of sent) {
      const c = e.command as Document;
      expect(["aggregate", "count", "distinct", "mapReduce"], `${e.commandName} ${JSON.stringify(c)}`).not.to.include(e.commandName);
      const queries: Array<{ filter: Document; sort?: Document }> = [];
      if (e.commandName === "find") queries.push({ filter: c.filter ?? {}, sort: c.sort });
      else if (e.commandName === "findAndModify") queries.push({ filter: c.query ?? {}, sort: c.sort });
      else if (e.commandName === "update") queries.push(...(c.updates as Document[]).map((u) => ({ filter: u.q })));
      else if (e.commandName === "delete") queries.push(...(c.deletes as Document[]).map((d) => ({ filter: d.q })));
      for (const q of queries) {
        const ok = indexes.some((keys) => serves(keys, q.filter, q.sort));
        expect(ok, `${e.commandName} without an index of its shape: ${JSON.stringify(q)}`).to.equal(true);
      }
    }
  }

  async function seeded(collection: string): Promise<ArticleStore> {
    const store = await openMongoArticleStore(db, collection);
    const old = new Date(Date.now() - 3 * 3_600_000);
    for (const p of ["p1", "p2"]) {
      for (let i = 0; i < 6; i++) {
        const over = { url: `http://127.0.0.1:9/${p}/${i}`, externalId: `${collection}-${p}-${i}`, labels: i % 2 ? ["sport"] : [] };
        const a = await store.insert(base(p, { ...over, ...(i === 3 ? { admission: "pending" as const } : {}) }), old);
        if (i < 3) {
          await store.claim(a.id, 1, old);
          await store.complete(a.id, 1, { audio: { key: "k", duration: 1 } }, old);
        } else if (i === 3) {
          await store.claimAdmission(a.id, 1, 60_000);
          await store.finishAdmission(a.id, 1, { status: "limit_reached", types: [], keepPending: true }, old);
        } else if (i === 4) await store.markDeleted(p, a.id, old);
      }
    }
    return store;
  }

  it("lists, the ready list of feeds and the player, and single reads: no count or aggregate, each find on an index of its shape", async () => {
    const store = await seeded("shapes_reads");
    const one = (await store.list("p1", 1, 0)).items[0];
    const sent = await recorded(async () => {
      expect((await store.list("p1", 2, 0)).count).to.equal(5);
      expect((await store.list("p1", 2, 4)).items).to.have.length(1);
      expect((await store.listReady("p1", { limit: 10, offset: 0 })).count).to.equal(3);
      expect((await store.listReady("p1", { label: "sport", limit: 10, offset: 0 })).count).to.equal(1);
      expect(await store.get("p1", one.id)).to.not.equal(null);
      expect(await store.getByExternalId("p1", one.externalId!)).to.not.equal(null);
      expect(await store.getByUrl("p1", one.url!)).to.not.equal(null);
    });
    await expectIndexed("shapes_reads", sent);
  });

  it("lists filtered by status, by label and by both: no count or aggregate, each find on an index of its shape, deep pages too", async () => {
    const store = await seeded("shapes_filters");
    const sent = await recorded(async () => {
      for (const offset of [0, 2]) {
        expect((await store.list("p1", 2, offset, { status: "ready" })).count).to.equal(3);
        expect((await store.list("p1", 2, offset, { status: "limit_reached" })).count).to.equal(1);
        expect((await store.list("p1", 2, offset, { label: "sport" })).count).to.equal(3);
        expect((await store.list("p1", 2, offset, { status: "ready", label: "sport" })).count).to.equal(1);
        expect((await store.list("p1", 2, offset, { status: "waiting", label: "sport" })).count).to.equal(1);
      }
    });
    await expectIndexed("shapes_filters", sent);
    const names = (await db.collection("shapes_filters").indexes()).map((i) => i.name);
    expect(names).to.include.members(["project_order_label", "project_status_order", "project_status_order_label"]);
  });

  it("search (issue 36): finds on the words index, hinted, each word itself or an anchored prefix; no count or aggregate", async () => {
    const store = await seeded("shapes_search");
    const sent = await recorded(async () => {
      expect((await store.list("p1", 2, 0, { words: ["titl*"] })).count).to.equal(5);
      expect((await store.list("p1", 2, 0, { words: ["title", "tex*"], status: "ready", label: "sport" })).count).to.equal(1);
    });
    await expectIndexed("shapes_search", sent);
    const searches = sent.filter((e) => e.commandName === "find" && (e.command as Document).filter?.words);
    expect(searches).to.have.length(2);
    for (const e of searches) {
      const c = e.command as Document;
      expect(c.hint).to.equal("project_words");
      expect(c.filter).to.include({ projectId: "p1", deleted: false });
      for (const w of c.filter.words.$all as Array<RegExp | string>) expect(typeof w === "string" ? w : w.source).to.match(/^\^?[a-z]+$/);
    }
    const index = (await db.collection("shapes_search").indexes()).find((i) => i.name === "project_words");
    expect(index?.key).to.deep.equal({ projectId: 1, deleted: 1, words: 1 });
  });

  it("the periodic paths (reconciler, deferred sweep, recrawl, status metrics) send no count or aggregate and walk only indexes of their shape", async () => {
    const store = await seeded("shapes_periodic");
    const bus = recordingBus();
    const reconciler = startReconciler({ store, bus, log: logger("shapes"), intervalMs: 3_600_000 });
    await reconciler.initialRun;
    const statuses = (s: ArticleStatus) => s;
    let recrawlAsked = 0;
    const deps = (enabled: boolean) => ({
      store,
      admission: { admit: async () => null, content: { extract: async () => "x" } } as never,
      settings: {
        get: async () => ({ ...UNBOUNDED, recrawl: { enabled, everyMinutes: 60, maxAgeHours: 24 } }),
        reserve: async () => ({ outcome: "reserved" as const, debited: false }),
        refund: async () => {},
        projects: async () => (recrawlAsked++, ["p1", "p2"]),
      },
      emit: () => {},
      log: logger("shapes"),
    });
    try {
      const sent = await recorded(async () => {
        expect(await reconciler.runOnce(Date.now())).to.equal(2);
        expect(await store.findDeferred(undefined, 200, [])).to.have.length(2);
        expect(await store.findDeferred("p1", 200, [])).to.have.length(1);
        expect(await store.findDeferred(undefined, 200, ["p1"])).to.have.length(1);
        const counts = await store.countByStatus!();
        expect(counts[statuses("ready")]).to.equal(6);
        expect(counts.deleted).to.equal(2);
        expect(await store.findRecrawlCandidates("p1", 0)).to.have.length(5);
      });
      await expectIndexed("shapes_periodic", sent);
      // No project has recrawl on: the pass asks for the projects' settings and reads no article.
      const off = await recorded(() => periodicRecrawl(deps(false)));
      expect(recrawlAsked).to.equal(1);
      expect(off.filter((e) => (e.command as Document)[e.commandName] === "shapes_periodic")).to.deep.equal([]);
      // On: candidates from each project's listing index (the fetch of a loopback address is refused before any traffic; the article is restored).
      const on = await recorded(() => periodicRecrawl({ ...deps(true), fetchOptions: { timeoutMs: 1 } } as never));
      await expectIndexed("shapes_periodic", on.filter((e) => (e.command as Document)[e.commandName] === "shapes_periodic"));
    } finally {
      await reconciler.stop();
    }
  });

  /** Counts as the documents say, by counting them the slow way. */
  async function truth(collection: string) {
    const col = db.collection(collection);
    const real = { _tallyOf: { $exists: false }, _tallyBuilt: { $exists: false } };
    const live = async (p: string) => col.countDocuments({ ...real, projectId: p, deleted: false });
    const ready = async (p: string, label?: string) => col.countDocuments({ ...real, projectId: p, status: "ready", ...(label ? { labels: label } : {}) });
    const byStatus = Object.fromEntries(await Promise.all(ARTICLE_STATUSES.map(async (s) => [s, await col.countDocuments({ ...real, status: s })])));
    const filtered = async (p: string, status: ArticleStatus | undefined, label: string | undefined) =>
      col.countDocuments({ ...real, projectId: p, deleted: false, ...(status ? { status } : {}), ...(label ? { labels: label } : {}) });
    return { live, ready, byStatus, filtered };
  }

  async function expectExact(store: ArticleStore, collection: string, projects: string[]) {
    const t = await truth(collection);
    for (const p of projects) {
      expect((await store.list(p, 1, 0)).count, `live ${p}`).to.equal(await t.live(p));
      expect((await store.listReady(p, { limit: 1, offset: 0 })).count, `ready ${p}`).to.equal(await t.ready(p));
      expect((await store.listReady(p, { label: "a", limit: 1, offset: 0 })).count, `ready ${p} a`).to.equal(await t.ready(p, "a"));
      // The list filters' totals: per status (ready ones from the ready counts), per label, per both.
      for (const status of [undefined, ...ARTICLE_STATUSES.filter((s) => s !== "deleted")]) {
        for (const label of [undefined, "a", "b"]) {
          if (status === undefined && label === undefined) continue;
          expect((await store.list(p, 1, 0, { status, label })).count, `${p} ${status} ${label}`).to.equal(await t.filtered(p, status, label));
        }
      }
    }
    expect(await store.countByStatus!()).to.deep.equal(t.byStatus);
  }

  it("keeps the counts exact through creates, edits, deletions, status changes and writers racing on the same articles", async () => {
    // One connection: the stand-in answers a findAndModify by encoding the live document, and drops
    // the connection when another connection changes that document meanwhile (not so MongoDB).
    // The writers still race: their commands interleave on the one connection.
    const one = await mongoDb(`${url}${url.includes("?") ? "&" : "?"}maxPoolSize=1&appName=race`, dbName);
    const store = await openMongoArticleStore(one, "exact");
    const projects = ["x1", "x2", "x3"];
    const made = await Promise.all(
      Array.from({ length: 90 }, (_, i) => store.insert(base(projects[i % 3], { labels: i % 2 ? ["a", "b"] : ["a", "a"], externalId: `ex-${i % 80}` })).catch(() => null)),
    );
    const ids = made.filter((a) => a !== null).map((a) => a!);
    expect(ids).to.have.length(80);
    await expectExact(store, "exact", projects);
    // Every article raced by several writers: worker results, a publisher edit, a deletion, admission.
    // Ten articles at a time.
    const race = async (a: (typeof ids)[number], i: number) => {
      // Two writers where the second puts the article back in the groups it was counted in: the
      // first one's late claim must not win (the claim names the state it was computed from).
      if (i % 2 === 0) {
        await Promise.all([store.claim(a.id, 1), store.update(a.projectId, a.id, 1, { labels: ["a", "b"] })]);
        return;
      }
      const ops: Array<Promise<unknown>> = [
        store.claim(a.id, 1).then(() => store.complete(a.id, 1, { audio: { key: "k", duration: 1 } })),
        store.fail(a.id, 1, "boom"),
        i % 3 === 0 ? store.markDeleted(a.projectId, a.id) : store.update(a.projectId, a.id, 1, { labels: ["a"] }),
        store.reportStatus(a.id, 1, "retry"),
      ];
      if (i % 4 === 0) ops.push(store.claimAdmission(a.id, 1, 1000).then(() => store.finishAdmission(a.id, 1, { status: "no_money", types: [], keepPending: true })));
      await Promise.all(ops);
    };
    for (let i = 0; i < ids.length; i += 10) await Promise.all(ids.slice(i, i + 10).map((a, j) => race(a, i + j)));
    await expectExact(store, "exact", projects);
    await Promise.all(ids.filter((_, i) => i % 5 === 1).map((a) => store.markDeleted(a.projectId, a.id)));
    await expectExact(store, "exact", projects);
  });

  it("counts an upgraded collection once at open, finds its pending articles once, and a recount repairs counts left off", async () => {
    // Written as the previous release laid articles out: no hidden tally field, no due time.
    const col = db.collection("upgraded");
    const old = new Date(Date.now() - 3_600_000);
    const doc = (i: number, status: ArticleStatus) => ({
      _id: `old-${i}`,
      projectId: i % 2 ? "u1" : "u2",
      title: "T",
      text: "x",
      isRaw: false,
      parse: false,
      voice: "alloy",
      lang: "en-US",
      types: [],
      labels: ["a"],
      status,
      revision: 1,
      added: Math.floor(old.getTime() / 1000) + i,
      updated: null,
      errors: [],
      updatedAt: old,
      deleted: status === "deleted",
    });
    await col.insertMany(Array.from({ length: 30 }, (_, i) => doc(i, (["waiting", "ready", "deleted", "processing", "errored", DEFERRED_STATUSES[0]] as const)[i % 6])) as never);
    const store = await openMongoArticleStore(db, "upgraded");
    await expectExact(store, "upgraded", ["u1", "u2"]);
    const due = await store.findStale(["waiting", "processing"], Date.now());
    expect(due.map((d) => d.id).sort()).to.deep.equal(Array.from({ length: 30 }, (_, i) => i).filter((i) => i % 6 === 0 || i % 6 === 3).map((i) => `old-${i}`).sort());
    // A second open neither counts twice nor backfills again.
    const again = await openMongoArticleStore(db, "upgraded");
    await expectExact(again, "upgraded", ["u1", "u2"]);
    // A counter left wrong (a server that failed between a write and its count) is repaired by a recount.
    await col.updateOne({ _tallyOf: "live", group: "u1" }, { $inc: { n: 5 } });
    expect((await again.list("u1", 1, 0)).count).to.not.equal((await (await truth("upgraded")).live("u1")));
    await again.recount!();
    await expectExact(again, "upgraded", ["u1", "u2"]);
  });
});
