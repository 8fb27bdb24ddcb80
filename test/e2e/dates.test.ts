// Publication dates, list order and language detection on the embedded default (dates-scenarios.ts).
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { startEmbedded, type Embedded } from "../../launch/embedded.js";
import { ROOMY_RATE_LIMITS } from "../support/rate-limits.js";
import { sink } from "../support/sink.js";
import { datesScenarios } from "./dates-scenarios.js";

const FULL = "dates-full-0123456789";

describe("publication dates and languages (embedded default)", function () {
  this.timeout(120_000);
  let dir: string;
  let sys: Embedded;

  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "dates-e2e-"));
    sys = await startEmbedded(
      { PORT: "0", HOST: "127.0.0.1", DATA_DIR: dir, SEED_TOKENS: JSON.stringify([{ token: FULL, project: "alpha", scope: "full" }]), AUDIO_ENGINE: process.env.AUDIO_ENGINE, ...ROOMY_RATE_LIMITS },
      sink(),
    );
  });
  after(async () => {
    await sys?.close();
    await rm(dir, { recursive: true, force: true });
  });

  datesScenarios(() => ({ url: sys.url, full: FULL }));
});
