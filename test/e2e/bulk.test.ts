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
