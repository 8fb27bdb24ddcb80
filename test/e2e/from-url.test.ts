// Create from a URL on the embedded default (issue 35, point 1); the same
// scenarios run on the full stack in from-url-stack.test.ts.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { startEmbedded, type Embedded } from "../../launch/embedded.js";
import { PageServer } from "../support/article-pages.js";
import { ROOMY_RATE_LIMITS } from "../support/rate-limits.js";
import { sink } from "../support/sink.js";
import { fromUrlScenarios } from "./from-url-scenarios.js";

const ADMIN = "admin-token-for-from-url-0123456789";
const INTERNAL = "internal-token-for-from-url-0123456789";

describe("create from a URL end to end (embedded default)", function () {
  this.timeout(300_000);
  let dataDir: string;
  let sys: Embedded;
  const site = new PageServer();

  before(async () => {
    await site.start();
    dataDir = await mkdtemp(path.join(tmpdir(), "e2e-from-url-"));
    sys = await startEmbedded(
      {
        PORT: "0",
        HOST: "127.0.0.1",
        DATA_DIR: dataDir,
        ADMIN_TOKEN: ADMIN,
        INTERNAL_TOKEN: INTERNAL,
        SEED_TOKENS: "[]",
        AUDIO_ENGINE: process.env.AUDIO_ENGINE,
        // The site only, on its own port: any other private target stays refused.
        FETCH_ALLOW_PRIVATE: `127.0.0.1:${site.port}`,
        ...ROOMY_RATE_LIMITS,
      },
      sink(),
    );
  });

  after(async () => {
    await sys?.close();
    await site.stop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  fromUrlScenarios(() => ({ url: sys.url, authUrl: sys.services[0].url, articlesUrl: sys.services[1].url, adminToken: ADMIN, internalToken: INTERNAL, site }));
});
