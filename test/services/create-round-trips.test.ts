// How many MongoDB round trips one create costs on the request path (issue 13,
// point 14: at most 3): auth and articles on MongoDB, counted with the
// driver's command monitoring while CreateArticle runs. No audio worker takes
// the published job, so everything counted belongs to the request.
import { expect } from "chai";
import { randomBytes } from "node:crypto";
import { pino } from "pino";
import { ArticlesService } from "../../gen/articles/v1/articles_pb.js";
import { AuthService } from "../../gen/auth/v1/auth_pb.js";
import { createMemoryBus } from "../../lib/bus/memory.js";
import { closeMongo, watchMongoCommands } from "../../lib/mongo.js";
import { closeRpcClients, rpcClient } from "../../lib/rpc/client.js";
import type { RunningService } from "../../lib/service.js";
import { startArticlesService } from "../../services/articles/app.js";
import { openArticleStore } from "../../services/articles/store/open.js";
import type { ArticleStore } from "../../services/articles/store/port.js";
import { startAuthService } from "../../services/auth/app.js";
import { provisionTokens } from "../../services/auth/provision.js";
import { openAuthStore } from "../../services/auth/store/open.js";
import type { AuthStore } from "../../services/auth/store/port.js";
import { requireMongo } from "../support/servers.js";

describe("create on MongoDB: database round trips on the request path", function () {
  this.timeout(60_000);
  const token = `rt-${randomBytes(12).toString("hex")}`;
  const internalToken = `internal-${randomBytes(12).toString("hex")}`;
  let commands: string[] | undefined;
  let authStore: AuthStore;
  let articleStore: ArticleStore;
  let auth: RunningService;
  let articles: RunningService;
  let client: ReturnType<typeof rpcClient<typeof ArticlesService>>;

  before(async function () {
    const url = await requireMongo(this);
    // A client of its own (other tests share the plain URL's unmonitored one).
    const cfg = { MONGODB_URL: `${url}${url.includes("?") ? "&" : "?"}appName=roundtrips`, MONGODB_DB: `roundtrips_${process.pid}`, DATA_DIR: "" };
    watchMongoCommands((e) => commands?.push(`${e.commandName} ${String((e.command as Record<string, unknown>)[e.commandName])}`));
    try {
      authStore = await openAuthStore(cfg);
      articleStore = await openArticleStore(cfg);
    } finally {
      watchMongoCommands(undefined);
    }
    const log = pino({ level: "silent" });
    await provisionTokens(authStore, JSON.stringify([{ token, project: "roundtrips", scope: "full" }]), process.stderr, "http://localhost", log);
    auth = await startAuthService({ store: authStore, internalToken, log });
    articles = await startArticlesService({
      store: articleStore,
      bus: createMemoryBus(),
      auth: rpcClient(AuthService, auth.url),
      settingsFrom: rpcClient(AuthService, auth.url, { token: internalToken }),
      internalToken,
      audioBaseUrl: "http://localhost/audio",
      log,
      reconcile: false,
      schedule: false,
    });
    client = rpcClient(ArticlesService, articles.url, { token });
  });

  after(async () => {
    await articles?.close();
    await auth?.close();
    await articleStore?.close();
    await authStore?.close();
    closeRpcClients();
    await closeMongo();
  });

  const create = (i: number) => client.createArticle({ title: `Round trips ${i}`, text: "A short article, admitted at once. ".repeat(5) });

  it("takes at most 3 round trips once the project's settings are cached, and admits the article", async () => {
    // The first create fills the settings cache (2 s) and the reservation hint.
    await create(0);
    const counts: number[] = [];
    for (let i = 1; i <= 3; i++) {
      commands = [];
      const { id } = await create(i);
      counts.push(commands.length);
      const seen = commands;
      commands = undefined;
      expect(seen.length, `create ${i}: ${seen.join(", ")}`).to.be.at.most(3);
      const stored = await articleStore.getById(id);
      // Admitted: a decision was recorded and the lease was let go.
      expect(stored?.admission).to.equal(undefined);
      expect(stored?.admittingUntil).to.equal(undefined);
      expect(stored?.status).to.equal("waiting");
    }
    expect(counts).to.have.length(3);
  });

  it("a reservation tried on a stale hint still honours settings changed meanwhile", async () => {
    const day = new Date().toISOString().slice(0, 10);
    expect(await authStore.reserve("roundtrips", day, 10)).to.include({ ok: true });
    // Bounded now: one article a day (already used) and no characters left.
    await authStore.saveSettings("roundtrips", { dailyLimit: 1 }, 0);
    expect(await authStore.reserve("roundtrips", day, 10)).to.include({ ok: false, reason: "limit_reached" });
    await authStore.saveSettings("roundtrips", { dailyLimit: null }, 5);
    expect(await authStore.reserve("roundtrips", day, 10)).to.include({ ok: false, reason: "no_money" });
    expect(await authStore.reserve("roundtrips", day, 5)).to.include({ ok: true, creditChars: 0 });
  });

  it("20 concurrent creates of one project share their reservations and inserts: far fewer than 20 writes each, all admitted", async () => {
    await authStore.saveSettings("roundtrips", { dailyLimit: null }, null);
    await create(100);
    commands = [];
    const ids = await Promise.all(Array.from({ length: 20 }, (_, i) => create(200 + i).then((r) => r.id)));
    const seen = commands;
    commands = undefined;
    const reservations = seen.filter((c) => c === "findAndModify auth_projects").length;
    expect(reservations, seen.join(", ")).to.be.at.least(1).and.at.most(10);
    // Inserts arriving while one is on its way go as one command (lib/store/mongo-collection.ts), sent as
    // upserts with the project's count (lib/store/mongo-tally.ts), and the decisions as one bulk update.
    const writes = seen.filter((c) => /^(insert|update|findAndModify) articles$/.test(c)).length;
    expect(writes, seen.join(", ")).to.be.at.least(1).and.at.most(20);
    for (const id of ids) expect((await articleStore.getById(id))?.status).to.equal("waiting");
  });

  it("a CreateArticles call of 20 (the gateway's batch) is stored with one write (with its counts), reserved with one write and decided with one update", async () => {
    await authStore.saveSettings("roundtrips", { dailyLimit: null }, null);
    await create(400);
    commands = [];
    const items = Array.from({ length: 20 }, (_, i) => ({ article: { title: `Batch ${i}`, text: "A short article, admitted at once. ".repeat(5) }, requestId: `rt-${i}` }));
    const { results } = await client.createArticles({ items });
    const seen = commands;
    commands = undefined;
    expect(seen.filter((c) => c === "findAndModify auth_projects"), seen.join(", ")).to.have.length(1);
    // The inserts with the project's count (one update command of upserts), then the admission
    // decisions: one bulk update and one read-back for the lot.
    expect(seen.filter((c) => c.startsWith("insert ") || c.startsWith("update ") || c.startsWith("findAndModify articles")), seen.join(", ")).to.have.length(2);
    expect(seen.filter((c) => c === "find articles"), seen.join(", ")).to.have.length(1);
    for (const r of results) {
      expect(r.outcome.case).to.equal("id");
      expect((await articleStore.getById(r.outcome.value as string))?.status).to.equal("waiting");
    }
  });

  it("the audio worker's claim and result cost two round trips each: the write, then the status counts it moves (the result's status event needs no re-read)", async () => {
    await authStore.saveSettings("roundtrips", { dailyLimit: null }, null);
    const { id } = await create(300);
    const worker = rpcClient(ArticlesService, articles.url, { token: internalToken });
    commands = [];
    expect((await worker.claimAudioJob({ articleId: id, revision: 1n })).stale).to.equal(false);
    const claimTrips = commands.length;
    commands = [];
    const done = await worker.completeAudioJob({ articleId: id, revision: 1n, audio: { key: `${id}/1/full.mp3`, duration: 3 } });
    const completeTrips = commands.length;
    commands = undefined;
    expect(done.applied).to.equal(true);
    expect([claimTrips, completeTrips]).to.deep.equal([2, 2]);
    expect((await articleStore.getById(id))?.status).to.equal("ready");
  });
});
