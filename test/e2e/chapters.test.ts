// Chapters from headings on the embedded default (chapters-scenarios.ts).
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { startEmbedded, type Embedded } from "../../launch/embedded.js";
import { chapterScenarios } from "./chapters-scenarios.js";
import { ROOMY_RATE_LIMITS } from "../support/rate-limits.js";
import { sink } from "../support/sink.js";

const TOKEN = "chapters-full-0123456789";

describe("chapters from headings (embedded default)", function () {
  this.timeout(300_000);
  let dataDir: string;
  let sys: Embedded | undefined;

  before(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), "e2e-chapters-"));
    sys = await startEmbedded(
      { PORT: "0", HOST: "127.0.0.1", DATA_DIR: dataDir, SEED_TOKENS: JSON.stringify([{ token: TOKEN, project: "chapters", scope: "full" }]), ...ROOMY_RATE_LIMITS },
      sink(),
    );
  });

  after(async () => {
    await sys?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  chapterScenarios(() => ({ url: sys!.url, token: TOKEN }));
});
