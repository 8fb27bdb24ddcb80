// Bulk import on the embedded default: the shared scenarios, plus what only
// this setup can show easily (the import bucket, flow control, the CLI).
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Writable } from "node:stream";
import { startEmbedded, type Embedded } from "../../launch/embedded.js";
import { ROOMY_RATE_LIMITS } from "../support/rate-limits.js";
import { importScenarios } from "./import-scenarios.js";

const TOKENS = { full: "imp-full-0123456789", read: "imp-read-0123456789" };
const SEED = JSON.stringify([
  { token: TOKENS.full, project: "alpha", scope: "full" },
  { token: TOKENS.read, project: "alpha", scope: "read" },
]);
const MAX_BODY = 16 * 1024;
const sink = () => new Writable({ write: (_c, _e, cb) => cb() });

describe("bulk import (embedded default)", function () {
  this.timeout(120_000);
  let dir: string;
  let sys: Embedded;

  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "import-e2e-"));
    sys = await startEmbedded({ PORT: "0", HOST: "127.0.0.1", DATA_DIR: dir, SEED_TOKENS: SEED, MAX_BODY_BYTES: String(MAX_BODY), AUDIO_ENGINE: process.env.AUDIO_ENGINE, ...ROOMY_RATE_LIMITS }, sink());
  });
  after(async () => {
    await sys?.close();
    await rm(dir, { recursive: true, force: true });
  });

  importScenarios(() => ({ url: sys.url, full: TOKENS.full, read: TOKENS.read, maxBodyBytes: MAX_BODY }));
});
