// Bulk import on the embedded default: the shared scenarios, plus what only
// this setup can show easily (the import bucket, flow control, the CLI).
import { expect } from "chai";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { startEmbedded, type Embedded } from "../../launch/embedded.js";
import { runCli } from "../../services/auth/cli.js";
import { api } from "../support/http.js";
import { ndjson, postImport } from "../support/import.js";
import { ROOMY_RATE_LIMITS } from "../support/rate-limits.js";
import { importIsolationScenarios, importScenarios, ISOLATION_ENV } from "./import-scenarios.js";
import { sink } from "../support/sink.js";

const TOKENS = { full: "imp-full-0123456789", read: "imp-read-0123456789", other: "imp-other-0123456789" };
const SEED = JSON.stringify([
  { token: TOKENS.full, project: "alpha", scope: "full" },
  { token: TOKENS.read, project: "alpha", scope: "read" },
  { token: TOKENS.other, project: "beta", scope: "full" },
]);
const MAX_BODY = 16 * 1024;

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

describe("bulk import cannot stall or hold up other projects (embedded default)", function () {
  this.timeout(120_000);
  let dir: string;
  let sys: Embedded;

  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "import-isolation-"));
    sys = await startEmbedded(
      { PORT: "0", HOST: "127.0.0.1", DATA_DIR: dir, SEED_TOKENS: SEED, MAX_BODY_BYTES: String(MAX_BODY), AUDIO_ENGINE: process.env.AUDIO_ENGINE, ...ROOMY_RATE_LIMITS, ...ISOLATION_ENV },
      sink(),
    );
  });
  after(async () => {
    await sys?.close();
    await rm(dir, { recursive: true, force: true });
  });

  importIsolationScenarios(() => ({
    url: sys.url,
    full: TOKENS.full,
    read: TOKENS.read,
    other: TOKENS.other,
    maxBodyBytes: MAX_BODY,
    // The embedded default serves from this very process.
    serverPid: process.pid,
    minBytesPerSecond: Number(ISOLATION_ENV.IMPORT_MIN_UPLOAD_BYTES_PER_SECOND),
    windowSeconds: Number(ISOLATION_ENV.IMPORT_UPLOAD_WINDOW_SECONDS),
  }));
});

describe("bulk import: its own bucket, and the admin CLI (embedded default)", function () {
  this.timeout(120_000);
  const ADMIN = "imp-admin-token-0123456789";
  const INTERNAL = "imp-internal-token-0123456789";
  let dir: string;
  let sys: Embedded;

  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "import-limits-"));
    sys = await startEmbedded(
      {
        PORT: "0",
        HOST: "127.0.0.1",
        DATA_DIR: dir,
        SEED_TOKENS: SEED,
        ADMIN_TOKEN: ADMIN,
        INTERNAL_TOKEN: INTERNAL,
        AUDIO_ENGINE: process.env.AUDIO_ENGINE,
        // Writes: three, then nothing for the rest of the test. Imports: 20 at once, then 40 lines/s.
        RATE_LIMIT_WRITES_PER_SECOND: "0.01",
        RATE_LIMIT_WRITES_BURST: "3",
        RATE_LIMIT_IMPORTS_PER_SECOND: "40",
        RATE_LIMIT_IMPORTS_BURST: "20",
      },
      sink(),
    );
  });
  after(async () => {
    await sys?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("an import waits for its bucket instead of failing lines, and neither it nor the writes use up the other's bucket", async () => {
    const A = api(sys.url, TOKENS.full);
    const started = performance.now();
    const big = await postImport(sys.url, TOKENS.full, ndjson(Array.from({ length: 60 }, (_, i) => ({ title: `Paced ${i}`, text: "x" }))));
    const seconds = (performance.now() - started) / 1000;
    expect(big.status, big.text).to.equal(200);
    expect(big.headers.get("ratelimit-policy")).to.equal('"imports";q=20;w=1');
    expect(big.lines.at(-1)).to.deep.equal({ result: "ok", imported: 60, failed: 0 });
    // 20 from the burst, 40 more at 40/s: about a second of waiting, never a refusal.
    expect(seconds).to.be.at.least(0.8);

    // The import took nothing from the writes: all three are still there.
    const writes = [];
    for (let i = 0; i < 4; i++) writes.push((await A("POST", "/api/articles", { title: `Write ${i}`, text: "x" })).status);
    expect(writes).to.deep.equal([200, 200, 200, 429]);

    // And with the writes used up, an import still goes through.
    const after = await postImport(sys.url, TOKENS.full, ndjson([{ title: "After the writes", text: "x" }]));
    expect(after.status, after.text).to.equal(200);
    expect(after.lines.at(-1)).to.deep.equal({ result: "ok", imported: 1, failed: 0 });
  });

  it("npm run admin -- import: imports a file for a project, prints the summary, writes the failed lines' results", async () => {
    const file = path.join(dir, "articles.ndjson");
    const failures = path.join(dir, "failed.ndjson");
    await writeFile(file, ndjson([{ title: "From the CLI", text: "One.", externalId: "cli-1" }, "{broken", { title: "Also from the CLI", text: "Two.", externalId: "cli-2" }, { title: "Dup", text: "x", externalId: "cli-1" }]));
    const urlOf = (name: string) => sys.services.find((s) => s.name === name)!.url;
    const env = { AUTH_URL: urlOf("auth"), ADMIN_TOKEN: ADMIN, ARTICLES_URL: urlOf("articles"), INTERNAL_TOKEN: INTERNAL };
    const out: string[] = [];
    const err: string[] = [];
    const io = { out: (s: string) => out.push(s), err: (s: string) => err.push(s) };
    const code = await runCli(["import", "--project", "alpha", "--file", file, "--audio", "onDemand", "--failures", failures], env, io);
    expect(code, err.join("\n")).to.equal(1);
    expect(out.join("\n")).to.contain('{"result":"ok","imported":2,"failed":2}');
    const failed = (await readFile(failures, "utf8")).trim().split("\n").map((l) => JSON.parse(l));
    expect(failed.map((f) => [f.line, f.status])).to.deep.equal([
      [2, 400],
      [4, 400],
    ]);
    // Created in the project, as its publisher sees them, and the duplicate names the holder.
    const A = api(sys.url, TOKENS.full);
    const one = await A("GET", "/api/articles_external_id/cli-1");
    expect(one.status).to.equal(200);
    expect(one.body.article.title).to.equal("From the CLI");
    expect(failed[1].id).to.equal(one.body.article.id);

    // Usage mistakes and an unknown project change nothing.
    expect(await runCli(["import", "--project", "alpha", "--file", file, "--audio", "later"], env, io)).to.equal(2);
    expect(await runCli(["import", "--project", "nope", "--file", file], env, io)).to.equal(1);
    expect(err.join("\n")).to.match(/project 'nope' does not exist/);
  });
});
