// Sources on the full stack (issue 35, points 2 and 5): the scenarios of
// sources.test.ts against MongoDB and separate processes, with a SECOND
// articles-service process beside the stack's: both scan for due sources
// every second, and a source must still be polled by exactly one of them.
import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { expect } from "chai";
import { startStack, type Stack } from "../../launch/stack.js";
import { freePort } from "../../lib/net/free-port.js";
import { api, waitFor } from "../support/http.js";
import { requireMongo, requireNats } from "../support/servers.js";
import { startFeedServer, type FeedServer } from "../sources/feed-server.js";
import { rssFeed } from "../sources/feeds.js";
import { ADMIN_TOKEN, prepareTestStack, StackLogs, TOKENS, withMongo, type TestStackRun } from "./stack-harness.js";
import { sourcesScenarios } from "./sources-scenarios.js";
import { MongoClient } from "mongodb";
import { openMongoSourceStore } from "../../services/articles/sources/open.js";
import type { SourceDoc } from "../../services/articles/sources/port.js";

const INTERNAL = "internal-token-for-sources-stack-0123456789";
const ITEMS_PER_POLL = 5;
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

/** Another articles-service process on the stack's database and bus, as a second replica would run. */
async function secondArticles(env: Record<string, string | undefined>, logs: StackLogs): Promise<ChildProcess> {
  const port = await freePort("127.0.0.1");
  const child = spawn(process.execPath, ["--import", "tsx", "launch/stack-child.ts", "services/articles/main.ts"], {
    cwd: ROOT,
    env: { ...env, ARTICLES_PORT: String(port) } as NodeJS.ProcessEnv,
    stdio: ["pipe", "pipe", "pipe"],
  });
  let rest = "";
  const onData = (b: Buffer) => {
    const lines = (rest + b.toString("utf8")).split("\n");
    rest = lines.pop() ?? "";
    for (const l of lines) logs.add("articles-2", l);
  };
  child.stdout!.on("data", onData);
  child.stderr!.on("data", onData);
  await waitFor("the second articles process", async () => (logs.records({ proc: "articles-2", msg: "articles listening" }).length ? true : undefined), 90_000, 200);
  return child;
}

describe("sources end to end (full stack: MongoDB, NATS, two articles processes)", function () {
  this.timeout(300_000);
  let run: TestStackRun;
  let stack: Stack;
  let second: ChildProcess | undefined;
  const logs = new StackLogs();
  let site: FeedServer;

  before(async function () {
    const mongoUrl = await requireMongo(this);
    const natsUrl = await requireNats(this);
    site = await startFeedServer();
    run = await prepareTestStack({
      mongoUrl,
      natsUrl,
      env: { INTERNAL_TOKEN: INTERNAL, FETCH_ALLOW_PRIVATE: `127.0.0.1:${site.port}`, SOURCE_ITEMS_PER_POLL: String(ITEMS_PER_POLL) },
    });
    stack = await startStack(run.env, { onLine: (p, l) => logs.add(p, l), startTimeoutMs: 90_000 });
    second = await secondArticles({ ...run.env, AUTH_URL: stack.process("auth").url }, logs);
  });

  afterEach(function () {
    if (this.currentTest?.state === "failed") console.log(`--- last stack output ---\n${logs.tail()}`);
  });

  after(async () => {
    if (second && second.exitCode === null) {
      const exited = new Promise((r) => second!.once("exit", r));
      second.kill("SIGTERM");
      await exited;
    }
    await stack?.stop();
    await run?.cleanup();
    await site?.close();
  });

  it("two articles processes: every due poll of a source is made by exactly one of them, and every item becomes one article", async () => {
    const A = api(stack.url, TOKENS.aFull);
    const feed = "/race.xml";
    // A slow feed: a second poller that had claimed the source too would be seen asking meanwhile.
    site.set(feed, { body: rssFeed([]), delayMs: 1_500 });
    const { id } = (await A("POST", "/api/sources", { url: `${site.url}${feed}` })).body;
    await waitFor("first poll", async () => ((await A("GET", `/api/sources/${id}`)).body.source.state.lastPoll ? true : undefined));
    const rounds = 6;
    for (let r = 0; r < rounds; r++) {
      const items = Array.from({ length: r + 1 }, (_, i) => ({ id: `urn:race:${i}`, link: `${site.url}/race/${i}`, title: `Race ${i}`, html: `<p>Race item ${i} of the sources stack test.</p>`, date: new Date(Date.now() - (r - i) * 1000).toISOString() }));
      site.set(feed, { body: rssFeed(items), delayMs: 1_500 });
      const before = site.hits(feed).requests;
      const last = (await A("GET", `/api/sources/${id}`)).body.source.state.lastPoll;
      // Due for both processes at once: each scans every second.
      await withMongo(run.env.MONGODB_URL!, run.db, (c) => c.db(run.db).collection("sources").updateOne({ _id: id as unknown as never }, { $set: { nextPoll: Date.now() + 500 } }));
      await waitFor(`poll ${r + 1}`, async () => ((await A("GET", `/api/sources/${id}`)).body.source.state.lastPoll !== last ? true : undefined), 30_000, 100);
      // Both had their next scans since; a second poll of this round would have asked the feed again.
      await new Promise((res) => setTimeout(res, 2_500));
      expect(site.hits(feed).requests - before, `feed requests in round ${r + 1}`).to.equal(1);
    }
    const polled = logs.records({ msg: "source polled" }).filter((rec) => rec.sourceId === id);
    expect(polled.length).to.equal(rounds + 1);
    const byProcess = new Set(polled.map((rec) => rec.proc));
    expect([...byProcess].every((p) => p === "articles" || p === "articles-2")).to.equal(true);
    const list = (await A("GET", "/api/sources")).body.sources.find((s: { id: string }) => s.id === id);
    expect(list.state.created).to.equal(rounds);
    for (let i = 0; i < rounds; i++) expect((await A("GET", `/api/articles_external_id/${encodeURIComponent(`urn:race:${i}`)}`)).status).to.equal(200);
    console.log(`      polls by process: ${JSON.stringify(Object.fromEntries([...byProcess].map((p) => [p, polled.filter((x) => x.proc === p).length])))}`);
  });

  it("the lease on MongoDB: of twelve claims raced from four connections exactly one wins, also for poll now", async () => {
    const clients = await Promise.all(Array.from({ length: 4 }, () => MongoClient.connect(run.env.MONGODB_URL!)));
    try {
      const stores = await Promise.all(clients.map((c) => openMongoSourceStore(c.db(run.db))));
      const now = Date.now();
      for (const force of [false, true]) {
        const doc: SourceDoc = { _id: `lease-${force}`, projectId: "lease", url: "https://news.example/feed.xml", pollSeconds: 300, labels: [], mode: "text", backfill: 0, paused: false, added: now, since: now, nextPoll: now, seen: 0, created: 0, updated: 0, failures: 0, leaseUntil: 0 };
        await stores[0].insert(doc, 100);
        const won = await Promise.all(Array.from({ length: 12 }, (_, i) => stores[i % 4].claim(doc._id, `owner-${i}`, now, 60_000, force)));
        expect(won.filter(Boolean).length, force ? "poll now" : "scheduled").to.equal(1);
      }
    } finally {
      await Promise.all(clients.map((c) => c.close()));
    }
  });

  sourcesScenarios(() => ({ url: stack.url, authUrl: stack.process("auth").url, articlesUrl: stack.process("articles").url, adminToken: ADMIN_TOKEN, internalToken: INTERNAL, site, itemsPerPoll: ITEMS_PER_POLL }));
});
