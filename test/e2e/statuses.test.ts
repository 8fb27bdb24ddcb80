// The rest of the status table end to end on the embedded default: limits,
// credit, rules, parsing, recrawl and events, driven through the public REST
// API and the admin CLI only (plus a loopback page server and webhook receiver).
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { startEmbedded, type Embedded } from "../../launch/embedded.js";
import { PublisherSite, statusScenarios } from "./statuses-scenarios.js";
import { ROOMY_RATE_LIMITS } from "../support/rate-limits.js";
import { sink } from "../support/sink.js";

const ADMIN = "admin-token-for-statuses-0123456789";
const INTERNAL = "internal-token-for-statuses-0123456789";

describe("statuses end to end (embedded default, REST + admin CLI)", function () {
  this.timeout(300_000);
  let dataDir: string;
  let sys: Embedded;
  const site = new PublisherSite();

  before(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), "e2e-statuses-"));
    await site.start();
    sys = await startEmbedded(
      { PORT: "0", HOST: "127.0.0.1", DATA_DIR: dataDir, ADMIN_TOKEN: ADMIN, INTERNAL_TOKEN: INTERNAL, SEED_TOKENS: "[]", FETCH_ALLOW_PRIVATE: "127.0.0.1", ...ROOMY_RATE_LIMITS },
      sink(),
    );
  });

  after(async () => {
    await sys?.close();
    await site.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  statusScenarios(
    () => ({ url: sys.url, authUrl: sys.services[0].url, articlesUrl: sys.services[1].url, adminToken: ADMIN, internalToken: INTERNAL }),
    site,
  );
});
