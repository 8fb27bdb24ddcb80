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

  sourcesScenarios(() => ({ url: sys.url, authUrl: sys.services[0].url, articlesUrl: sys.services[1].url, adminToken: ADMIN, internalToken: INTERNAL, site, itemsPerPoll: ITEMS_PER_POLL }));
});
