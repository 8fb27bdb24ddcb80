// Faults on the full stack: a worker killed mid-job, service restarts and a
// NATS outage must lose no article and no token. The stack runs as separate
// processes (launch/stack.ts) with a short job lease and a fast reconciler so
// the recovery paths run within seconds; NATS is a private server here
// because the outage test stops it.
import { expect } from "chai";
import { parseFrames } from "../../services/audio/mp3/index.js";
import { api, waitFor } from "../support/http.js";
import { requireMongo, startNatsServer, type LocalNatsServer } from "../support/servers.js";
import { ADMIN_TOKEN, TOKENS, prose, startTestStack, type TestStack } from "./stack-harness.js";

type Call = ReturnType<typeof api>;

const ACK_WAIT_MS = 3_000;

describe("faults on the full stack (worker crash, restarts, NATS outage)", function () {
  // Renders run below the services' priority: beside busy programs an article takes minutes.
  this.timeout(900_000);
  let nats: LocalNatsServer | undefined;
  let t: TestStack;
  let A: Call;
  let AR: Call;

  async function status(call: Call, id: string): Promise<string | undefined> {
    return (await call("GET", `/api/articles/${id}`)).body?.article?.status;
  }

  async function ready(call: Call, id: string, timeoutMs = 600_000) {
    return waitFor(`article ${id} ready`, async () => {
      const r = await call("GET", `/api/articles/${id}`);
      if (r.body?.article?.status === "errored") throw new Error(`errored: ${r.body.article.error}`);
      return r.body?.article?.status === "ready" ? r.body.article : undefined;
    }, timeoutMs, 100);
  }

  /** Connect JSON call to the auth service's admin RPCs, as `npm run admin` makes them. */
  async function admin(method: string, body: object): Promise<any> {
    const res = await fetch(`${t.stack.process("auth").url}/auth.v1.AuthService/${method}`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${ADMIN_TOKEN}` },
      body: JSON.stringify(body),
    });
    const json = await res.json();
    if (!res.ok) throw new Error(`${method}: ${res.status} ${JSON.stringify(json)}`);
    return json;
  }

  before(async function () {
    const mongoUrl = await requireMongo(this);
    try {
      nats = await startNatsServer();
    } catch (err) {
      const msg = `NATS tier did not run: ${(err as Error).message}`;
      if (process.env.CI === "true") throw new Error(msg);
      console.warn(`      ⚠ ${msg}`);
      this.skip();
    }
    t = await startTestStack({
      mongoUrl,
      natsUrl: nats.url,
      env: {
        AUDIO_ACK_WAIT_MS: String(ACK_WAIT_MS),
        RECONCILE_INTERVAL_MS: "1000",
        RECONCILE_STALE_MS: "2000",
      },
    });
    A = api(t.stack.url, TOKENS.aFull);
    AR = api(t.stack.url, TOKENS.aRead);
  });

  beforeEach(async () => {
    // A test that failed half-way must not leave the next one with a process down.
    for (const p of t.stack.processes) if (!p.running) await p.restart();
  });

  afterEach(function () {
    if (this.currentTest?.state === "failed" && t) console.log(`--- last stack output ---\n${t.logs.tail()}`);
  });

  after(async () => {
    // The stack first: its NATS clients would otherwise wait for the server.
    await t?.cleanup();
    await nats?.stop();
  });

  it("redelivers the job of an audio worker killed mid-render, and the article becomes ready", async () => {
    const { body } = await A("POST", "/api/articles", { title: "A long read", text: prose(8_000) });
    const id = body.id as string;

    const claim = await waitFor("a worker to claim the job", async () => t.logs.records({ msg: "audio job claimed", articleId: id })[0], 30_000, 20);
    expect(await status(A, id)).to.equal("processing");
    const victim = t.stack.process(claim.proc);
    const survivor = t.stack.process(claim.proc === "audio-1" ? "audio-2" : "audio-1");
    const victimPid = victim.pid;
    victim.kill("SIGKILL");
    await victim.exited();
    expect(victim.running).to.equal(false);
    // It died holding the job: nothing was stored for it.
    expect(t.logs.records({ proc: victim.name, msg: "audio job completed", articleId: id })).to.have.length(0);

    const killedAt = Date.now();
    const art = await ready(A, id);
    const recoveredMs = Date.now() - killedAt;
    // JetStream gave the same message to the other worker once the lease ran out: a redelivery
    // (attempt 2, or later when a loaded machine let a pull expire as the server answered it).
    const reclaim = t.logs.records({ proc: survivor.name, msg: "audio job claimed", articleId: id });
    expect(reclaim.length, "the survivor claimed the job").to.be.greaterThan(0);
    expect(Math.min(...reclaim.map((r) => r.attempt as number))).to.be.at.least(2);
    // The worker logs completion after the article has turned ready.
    await waitFor("the survivor to log the completion", async () => t.logs.records({ proc: survivor.name, msg: "audio job completed", articleId: id })[0], 10_000, 20);
    const mp3 = Buffer.from(await (await fetch(art.audio.replace("localhost", "127.0.0.1"))).arrayBuffer());
    expect(parseFrames(mp3).length).to.be.greaterThan(1000);
    console.log(`      kill -9 → ready in ${recoveredMs} ms (lease ${ACK_WAIT_MS} ms)`);

    // The launcher restarted nothing by itself; an explicit restart brings it back.
    expect(victim.running).to.equal(false);
    await victim.restart();
    expect(victim.pid).to.be.a("number").and.not.equal(victimPid);
  });

  it("keeps every article and token across restarts of auth, articles and the gateway", async () => {
    // A token issued at run time (not re-seeded on start) and an article of its project.
    await admin("CreateProject", { id: "gamma", name: "Gamma" });
    const issued = (await admin("IssueToken", { projectId: "gamma", scope: "SCOPE_READ" })).token as string;
    const issuedFull = (await admin("IssueToken", { projectId: "gamma", scope: "SCOPE_FULL" })).token as string;
    const G = api(t.stack.url, issuedFull);
    const GR = api(t.stack.url, issued);
    const g = await G("POST", "/api/articles", { title: "Gamma news", text: "Gamma has news today.", externalId: "gamma-1" });
    expect(g.status).to.equal(200);
    for (const i of [1, 2, 3]) await A("POST", "/api/articles", { title: `Before restart ${i}`, text: prose(200), externalId: `restart-${i}` });
    const list = (await A("GET", "/api/articles?limit=100")).body;
    await Promise.all([...list.articles.map((a: { id: string }) => ready(A, a.id)), ready(G, g.body.id)]);

    const snapshot = async () => ({
      alpha: (await A("GET", "/api/articles?limit=100")).body,
      alphaOne: await Promise.all(list.articles.map(async (a: { id: string }) => (await AR("GET", `/api/articles/${a.id}`)).body)),
      gamma: (await GR("GET", "/api/articles_external_id/gamma-1")).body,
    });
    const before = await snapshot();
    expect(before.alpha.count).to.be.at.least(4);

    const pids = ["auth", "articles", "gateway"].map((n) => t.stack.process(n).pid);
    for (const name of ["auth", "articles", "gateway"]) await t.stack.process(name).restart();
    expect(["auth", "articles", "gateway"].map((n) => t.stack.process(n).pid)).to.not.include.members(pids.filter(Boolean) as number[]);

    const after = await snapshot();
    expect(after).to.deep.equal(before);
    // Scopes survived with the tokens.
    expect((await GR("POST", "/api/articles", { title: "t", text: "x" })).status).to.equal(403);
    expect((await AR("POST", "/api/articles", { title: "t", text: "x" })).status).to.equal(403);
    expect((await GR("GET", "/api/articles_external_id/restart-1")).status).to.equal(404);
    // And the pipeline works again end to end.
    const fresh = await A("POST", "/api/articles", { title: "After restart", text: "Everything is back." });
    expect(fresh.status).to.equal(200);
    await ready(A, fresh.body.id);
  });

  it("accepts articles and answers reads while NATS is down, and renders them all once it is back", async () => {
    const { body: existing } = await A("GET", "/api/articles_external_id/restart-1");
    await nats!.stop();
    const outageStart = Date.now();

    // A reader polling all through the outage and the recovery.
    const readStatuses: number[] = [];
    let reading = true;
    const reader = (async () => {
      while (reading) {
        readStatuses.push((await AR("GET", `/api/articles/${existing.article.id}`)).status);
        readStatuses.push((await AR("GET", "/api/articles")).status);
        await new Promise((r) => setTimeout(r, 100));
      }
    })();

    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await A("POST", "/api/articles", { title: `During outage ${i}`, text: prose(300 + 50 * i) });
      expect(r.status, r.text).to.equal(200);
      ids.push(r.body.id);
    }
    for (const id of ids) expect(await status(A, id)).to.equal("waiting");
    const wait = 3_000 - (Date.now() - outageStart);
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));

    await nats!.restart();
    const backAt = Date.now();
    try {
      await Promise.all(ids.map((id) => ready(A, id)));
    } finally {
      reading = false;
      await reader;
    }
    console.log(`      NATS down ${backAt - outageStart} ms; all ${ids.length} ready ${Date.now() - backAt} ms after it returned`);
    expect(readStatuses.length).to.be.greaterThan(10);
    expect(readStatuses.filter((s) => s !== 200)).to.deep.equal([]);
  });
});
