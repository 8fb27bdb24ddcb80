// Audio on demand on the embedded default (issue 22, point 5). The embedded
// reconciler runs every 30 s, too slow to wait for here: its leaving parked
// articles alone is shown in test/services/articles-reconciler.test.ts and on
// the full stack, whose reconciler ticks every second in on-demand-stack.test.ts.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { startEmbedded, type Embedded } from "../../launch/embedded.js";
import { ROOMY_RATE_LIMITS } from "../support/rate-limits.js";
import { LIVE_IDLE_MS, onDemandScenarios } from "./on-demand-scenarios.js";
import { sink } from "../support/sink.js";

const ADMIN = "admin-token-for-on-demand-0123456789";
const INTERNAL = "internal-token-for-on-demand-0123456789";

describe("audio on demand end to end (embedded default)", function () {
  this.timeout(1_200_000);
  let dataDir: string;
  let sys: Embedded;
  const figures: Record<string, number> = {};

  before(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), "e2e-on-demand-"));
    sys = await startEmbedded(
      { PORT: "0", HOST: "127.0.0.1", DATA_DIR: dataDir, ADMIN_TOKEN: ADMIN, INTERNAL_TOKEN: INTERNAL, SEED_TOKENS: "[]", AUDIO_ENGINE: process.env.AUDIO_ENGINE, LIVE_AUDIO_IDLE_MS: LIVE_IDLE_MS, ...ROOMY_RATE_LIMITS },
      sink(),
    );
  });

  after(async () => {
    if (Object.keys(figures).length) console.log(`      on demand, embedded default: ${JSON.stringify(figures)}`);
    await sys?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  onDemandScenarios(() => ({
    url: sys.url,
    authUrl: sys.services[0].url,
    articlesUrl: sys.services[1].url,
    adminToken: ADMIN,
    internalToken: INTERNAL,
    reconcilerTicks: async () => undefined,
    figures,
  }));
});
