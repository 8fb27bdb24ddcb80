// Sources on the embedded default (issue 35, points 2 and 5): the shared
// scenarios, plus a 10,000-item feed that must not stall another project.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { startEmbedded, type Embedded } from "../../launch/embedded.js";
import { ROOMY_RATE_LIMITS } from "../support/rate-limits.js";
import { sink } from "../support/sink.js";
import { startFeedServer, type FeedServer } from "../sources/feed-server.js";
import { sourcesScenarios } from "./sources-scenarios.js";
import { expect } from "chai";
import { operator } from "./statuses-scenarios.js";
import { api } from "../support/http.js";
import { expectNoStall } from "../support/bystander.js";
import { rssFeed } from "../sources/feeds.js";

const ADMIN = "admin-token-for-sources-0123456789";
const INTERNAL = "internal-token-for-sources-0123456789";
const ITEMS_PER_POLL = 5;

describe("sources end to end (embedded default)", function () {
  this.timeout(300_000);
  let dataDir: string;
  let sys: Embedded;
  let site: FeedServer;

  before(async () => {
    site = await startFeedServer();
    dataDir = await mkdtemp(path.join(tmpdir(), "e2e-sources-"));
    sys = await startEmbedded(
      {
        PORT: "0",
        HOST: "127.0.0.1",
        DATA_DIR: dataDir,
        ADMIN_TOKEN: ADMIN,
        INTERNAL_TOKEN: INTERNAL,
        SEED_TOKENS: "[]",
        AUDIO_ENGINE: process.env.AUDIO_ENGINE,
        // The test site only: the allow-list names its port.
        FETCH_ALLOW_PRIVATE: `127.0.0.1:${site.port}`,
        SOURCE_ITEMS_PER_POLL: String(ITEMS_PER_POLL),
        ...ROOMY_RATE_LIMITS,
      },
      sink(),
    );
  });

  after(async () => {
    await sys?.close();
    await site?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  const target = () => ({ url: sys.url, authUrl: sys.services[0].url, articlesUrl: sys.services[1].url, adminToken: ADMIN, internalToken: INTERNAL });

  it("a feed of 10,000 items imports at most the bound per poll and does not stall another project's reads", async () => {
    const { cliJson } = operator(target);
    const tokenOf = async (id: string, ...settings: string[]) => {
      await cliJson("projects:create", id);
      if (settings.length) await cliJson("settings:set", id, ...settings);
      return (await cliJson("tokens:issue", id, "full")).token as string;
    };
    // The big feed's articles wait on demand: the reads are measured against the poll, not against renders.
    const big = api(sys.url, await tokenOf("src-big", "audio=onDemand"));
    const calm = api(sys.url, await tokenOf("src-calm", "audio=onDemand"));
    for (let i = 0; i < 20; i++) await calm("POST", "/api/articles", { title: `Calm ${i}`, text: "A quiet project's article." });
    site.set("/big.xml", { body: rssFeed([]) });
    const { id } = (await big("POST", "/api/sources", { url: `${site.url}/big.xml` })).body;
    await new Promise((r) => setTimeout(r, 1_000));
    const now = Date.now() + 60_000;
    const items = Array.from({ length: 10_000 }, (_, i) => ({ id: `urn:big:${i}`, link: `${site.url}/big/${i}`, title: `Big ${i}`, html: `<p>Item ${i} of a very long feed.</p>`, date: new Date(now - i * 1000).toISOString() }));
    site.set("/big.xml", { body: rssFeed(items) });

    const reads = async (until: () => boolean, min: number) => {
      const ms: number[] = [];
      while (ms.length < min || !until()) {
        const t0 = performance.now();
        const r = await calm("GET", "/api/articles?limit=10");
        ms.push(performance.now() - t0);
        expect(r.status).to.equal(200);
      }
      return ms.sort((a, b) => a - b);
    };
    const p99 = (ms: number[]) => ms[Math.min(ms.length - 1, Math.ceil(ms.length * 0.99) - 1)];
    const reference = await reads(() => true, 200);
    const during: number[] = [];
    for (let round = 1; round <= 3; round++) {
      let done = false;
      const polled = big("POST", `/api/sources/${id}/poll`).finally(() => (done = true));
      during.push(...(await reads(() => done, 20)));
      const s = (await polled).body.source;
      expect(s.state).to.include({ seen: 10_000, created: ITEMS_PER_POLL * round, error: null });
    }
    during.sort((a, b) => a - b);
    console.log(`      another project's reads: p99 ${p99(reference).toFixed(1)} ms alone, ${p99(during).toFixed(1)} ms during three polls of a 10,000-item feed (${during.length} reads)`);
    // Generous: the poll shares two loaded cores with the reads, and a few milliseconds' reference
    // times ten is one scheduling hiccup on a loaded machine (it failed so at load 27); a stall
    // would be the whole feed's parse and admission, which a loaded machine stretches as well.
    expectNoStall("another project's p99 during the polls", p99(during), p99(reference), { slackMs: 500 });
  });

  sourcesScenarios(() => ({ url: sys.url, authUrl: sys.services[0].url, articlesUrl: sys.services[1].url, adminToken: ADMIN, internalToken: INTERNAL, site, itemsPerPoll: ITEMS_PER_POLL }));
});
