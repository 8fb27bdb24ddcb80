// Bulk jobs on the full stack (issue 36, point 2): the scenarios of bulk.test.ts
// against auth, articles, audio workers and the gateway as separate processes,
// MongoDB and NATS (the jobs paced through the gateways' shared KV buckets).
import { expect } from "chai";
import { waitFor } from "../support/http.js";
import { requireMongo, requireNats } from "../support/servers.js";
import { operator } from "./statuses-scenarios.js";
import { bulkScenarios } from "./bulk-scenarios.js";
import { ADMIN_TOKEN, startTestStack, type TestStack } from "./stack-harness.js";

const INTERNAL = "internal-token-for-bulk-stack-0123456789";

describe("bulk jobs end to end (full stack: MongoDB, NATS, one process per service)", function () {
  this.timeout(300_000);
  let t: TestStack;

  before(async function () {
    const mongoUrl = await requireMongo(this);
    const natsUrl = await requireNats(this);
    t = await startTestStack({ mongoUrl, natsUrl, env: { INTERNAL_TOKEN: INTERNAL } });
  });

  afterEach(function () {
    if (this.currentTest?.state === "failed" && t) console.log(`--- last stack output ---\n${t.logs.tail()}`);
  });

  after(async () => {
    await t?.cleanup();
  });

  const target = () => ({
    url: t.stack.url,
    authUrl: t.stack.process("auth").url,
    articlesUrl: t.stack.process("articles").url,
    adminToken: ADMIN_TOKEN,
    internalToken: INTERNAL,
  });
  bulkScenarios(target);

  it("a job outlives its articles process killed mid-way: the restarted process takes it over where it was once the lease lapses", async () => {
    const { cliJson, projectWithTokens } = operator(target);
    const { id: project, A } = await projectWithTokens("bulk-kill");
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) ids.push((await A("POST", "/api/articles", { title: `Kill ${i}`, text: "A short text." })).body.id);
    // Two writes a second from now (the articles service reads settings anew after 2 s): the job lasts several seconds.
    await cliJson("settings:set", project, "rateLimit.writes.perSecond=2", "rateLimit.writes.burst=4");
    await new Promise((r) => setTimeout(r, 2_100));
    const r = await A("POST", "/api/articles/bulk", { action: "addLabels", ids, labels: ["survived"] });
    expect(r.status, JSON.stringify(r.body)).to.equal(202);
    await waitFor("a few done", async () => ((await A("GET", `/api/jobs/${r.body.id}`)).body.job.done >= 2 ? true : undefined), 60_000, 50);
    const articles = t.stack.process("articles");
    articles.kill("SIGKILL");
    await articles.exited();
    await articles.restart();
    const job = await waitFor("the job finished by the restarted process", async () => {
      const j = (await A("GET", `/api/jobs/${r.body.id}`)).body.job;
      return j && j.state !== "running" ? j : undefined;
    }, 120_000, 250);
    expect(job).to.include({ state: "done", total: 12, done: 12, failed: 0 });
    for (const id of ids) expect((await A("GET", `/api/articles/${id}`)).body.article.labels).to.deep.equal(["survived"]);
  });
});
