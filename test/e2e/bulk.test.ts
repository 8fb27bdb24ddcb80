// Bulk jobs on the embedded default (issue 36, point 2), and a job that outlives a restart.
import { expect } from "chai";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { startEmbedded, type Embedded } from "../../launch/embedded.js";
import { api, waitFor } from "../support/http.js";
import { ROOMY_RATE_LIMITS } from "../support/rate-limits.js";
import { sink } from "../support/sink.js";
import { bulkScenarios } from "./bulk-scenarios.js";
import { operator } from "./statuses-scenarios.js";

const ADMIN = "admin-token-for-bulk-jobs-0123456789";
const INTERNAL = "internal-token-for-bulk-jobs-0123456789";

describe("bulk jobs end to end (embedded default)", function () {
  this.timeout(300_000);
  let dataDir: string;
  let sys: Embedded;
  const env = () => ({ PORT: "0", HOST: "127.0.0.1", DATA_DIR: dataDir, ADMIN_TOKEN: ADMIN, INTERNAL_TOKEN: INTERNAL, SEED_TOKENS: "[]", AUDIO_ENGINE: process.env.AUDIO_ENGINE, ...ROOMY_RATE_LIMITS });
  const target = () => ({ url: sys.url, authUrl: sys.services[0].url, articlesUrl: sys.services[1].url, adminToken: ADMIN, internalToken: INTERNAL });

  before(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), "e2e-bulk-"));
    sys = await startEmbedded(env(), sink());
  });

  after(async () => {
    await sys?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  bulkScenarios(target);

  it("another project's reads are not held up while a large job runs: their median stays within a few times that of the same reads before it", async () => {
    const { projectWithTokens } = operator(target);
    const job = await projectWithTokens("bulk-big");
    const reader = await projectWithTokens("bulk-reader");
    // 1,000 articles through the import (stored on demand: nothing rendered), labelled by the job as fast as it may (roomy limits here).
    const lines = Array.from({ length: 1000 }, (_, i) => JSON.stringify({ title: `Big ${i}`, text: `Text ${i}.` })).join("\n");
    const imported = await fetch(`${sys.url}/api/articles/import?audio=onDemand`, { method: "POST", headers: { authorization: `Bearer ${job.token}`, "content-type": "application/x-ndjson" }, body: lines });
    expect((await imported.text()).trim().split("\n").pop()).to.equal('{"result":"ok","imported":1000,"failed":0}');
    const readId = (await reader.A("POST", "/api/articles", { title: "Read me", text: "A text to read." })).body.id as string;
    const median = async (n: number) => {
      const times: number[] = [];
      for (let i = 0; i < n; i++) {
        const t0 = performance.now();
        expect((await reader.R("GET", i % 2 ? `/api/articles/${readId}` : "/api/articles?limit=10")).status).to.equal(200);
        times.push(performance.now() - t0);
      }
      return times.sort((a, b) => a - b)[Math.floor(n / 2)];
    };
    await median(10);
    const before = await median(40);
    const started = await job.A("POST", "/api/articles/bulk", { action: "addLabels", filter: {}, labels: ["big"] });
    expect(started.status, JSON.stringify(started.body)).to.equal(202);
    const during = await median(40);
    const progress = (await job.A("GET", `/api/jobs/${started.body.id}`)).body.job;
    // The reads were measured while the job was at work (not after it had finished).
    expect(progress.done, JSON.stringify(progress)).to.be.below(1000);
    expect(progress.done).to.be.above(0);
    expect(during, `median ${during.toFixed(1)} ms during the job, ${before.toFixed(1)} ms before`).to.be.below(before * 5 + 25);
    await job.A("DELETE", `/api/jobs/${started.body.id}`);
  });

  it("a running job survives a restart: the next start takes it over where it was and finishes it", async () => {
    const { cliJson } = operator(target);
    await cliJson("projects:create", "bulk-restart");
    const { token } = await cliJson("tokens:issue", "bulk-restart", "full");
    let A = api(sys.url, token);
    const ids: string[] = [];
    for (let i = 0; i < 16; i++) ids.push((await A("POST", "/api/articles", { title: `Restart ${i}`, text: "A short text." })).body.id);
    // Four writes a second from now (the articles service reads settings anew after 2 s): the job lasts a few seconds.
    await cliJson("settings:set", "bulk-restart", "rateLimit.writes.perSecond=4", "rateLimit.writes.burst=4");
    await new Promise((res) => setTimeout(res, 2_100));
    const r = await A("POST", "/api/articles/bulk", { action: "addLabels", ids, labels: ["moved"] });
    await waitFor("a few done", async () => ((await A("GET", `/api/jobs/${r.body.id}`)).body.job.done >= 3 ? true : undefined), 60_000, 50);
    await sys.close();
    sys = await startEmbedded(env(), sink());
    A = api(sys.url, token);
    const job = await waitFor("job finished after the restart", async () => {
      const j = (await A("GET", `/api/jobs/${r.body.id}`)).body.job;
      return j.state !== "running" ? j : undefined;
    }, 120_000, 100);
    expect(job).to.include({ state: "done", total: 16, done: 16, failed: 0 });
    for (const id of ids) expect((await A("GET", `/api/articles/${id}`)).body.article.labels).to.deep.equal(["moved"]);
  });
});
