// Search end to end on the embedded default (search-scenarios.ts).
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { startEmbedded, type Embedded } from "../../launch/embedded.js";
import { ROOMY_RATE_LIMITS } from "../support/rate-limits.js";
import { sink } from "../support/sink.js";
import { searchScenarios } from "./search-scenarios.js";

const TOKENS = { a: "search-a-full-0123456789", aRead: "search-a-read-0123456789", b: "search-b-full-0123456789" };

describe("search end to end (embedded default)", function () {
  this.timeout(180_000);
  let dataDir: string;
  let sys: Embedded;

  before(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), "e2e-search-"));
    const seed = [
      { token: TOKENS.a, project: "alpha", scope: "full" },
      { token: TOKENS.aRead, project: "alpha", scope: "read" },
      { token: TOKENS.b, project: "beta", scope: "full" },
    ];
    sys = await startEmbedded({ PORT: "0", HOST: "127.0.0.1", DATA_DIR: dataDir, SEED_TOKENS: JSON.stringify(seed), ...ROOMY_RATE_LIMITS }, sink());
  });

  after(async () => {
    await sys?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  searchScenarios(() => ({ url: sys.url, ...TOKENS }));
});
