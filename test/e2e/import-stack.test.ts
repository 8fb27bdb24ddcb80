// Bulk import on the full stack: gateway, auth and articles as separate
// processes on MongoDB and NATS (the import bucket in NATS KV), and the admin
// CLI against the articles service there.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect } from "chai";
import { runCli } from "../../services/auth/cli.js";
import { api } from "../support/http.js";
import { ndjson } from "../support/import.js";
import { requireMongo, requireNats } from "../support/servers.js";
import { importIsolationScenarios, importScenarios, ISOLATION_ENV } from "./import-scenarios.js";
import { ADMIN_TOKEN, startTestStack, TOKENS, type TestStack } from "./stack-harness.js";

const INTERNAL = "internal-token-for-import-stack-0123456789";
const MAX_BODY = 16 * 1024;

describe("bulk import (full stack: MongoDB, NATS, one process per service)", function () {
  this.timeout(120_000);
  let t: TestStack;

  before(async function () {
    const mongoUrl = await requireMongo(this);
    const natsUrl = await requireNats(this);
    t = await startTestStack({ mongoUrl, natsUrl, env: { INTERNAL_TOKEN: INTERNAL, MAX_BODY_BYTES: String(MAX_BODY), ...ISOLATION_ENV } });
  });
  afterEach(function () {
    if (this.currentTest?.state === "failed" && t) console.log(`--- last stack output ---\n${t.logs.tail()}`);
  });
  after(async () => {
    await t?.cleanup();
  });

  // Before the shared scenarios (Mocha runs sibling suites in order), while no renders of theirs compete with the bystander's reads.
  describe("cannot stall or hold up other projects", () => {
    importIsolationScenarios(() => ({
      url: t.stack.url,
      full: TOKENS.aFull,
      read: TOKENS.aRead,
      other: TOKENS.bFull,
      maxBodyBytes: MAX_BODY,
      serverPid: t.stack.process("gateway").pid,
      minBytesPerSecond: Number(ISOLATION_ENV.IMPORT_MIN_UPLOAD_BYTES_PER_SECOND),
      windowSeconds: Number(ISOLATION_ENV.IMPORT_UPLOAD_WINDOW_SECONDS),
    }));
  });

  describe("the scenarios both modes share", () => {
    importScenarios(() => ({ url: t.stack.url, full: TOKENS.aFull, read: TOKENS.aRead, maxBodyBytes: MAX_BODY }));
  });

  it("the admin CLI imports a file into a project of the stack", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "import-stack-cli-"));
    try {
      const file = path.join(dir, "a.ndjson");
      await writeFile(file, ndjson([{ title: "Stack CLI one", text: "x", externalId: "stack-cli-1" }, { title: "Stack CLI two", text: "y", externalId: "stack-cli-2" }]));
      const env = { AUTH_URL: t.stack.process("auth").url, ADMIN_TOKEN, ARTICLES_URL: t.stack.process("articles").url, INTERNAL_TOKEN: INTERNAL };
      const out: string[] = [];
      const err: string[] = [];
      const code = await runCli(["import", "--project", "beta", "--file", file], env, { out: (s) => out.push(s), err: (s) => err.push(s) });
      expect(code, err.join("\n")).to.equal(0);
      expect(out.join("\n")).to.contain('{"result":"ok","imported":2,"failed":0}');
      const B = api(t.stack.url, TOKENS.bFull);
      expect((await B("GET", "/api/articles_external_id/stack-cli-2")).body.article.title).to.equal("Stack CLI two");
      // Another project's token does not see them.
      expect((await api(t.stack.url, TOKENS.aFull)("GET", "/api/articles_external_id/stack-cli-2")).status).to.equal(404);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
