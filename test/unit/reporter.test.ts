// The CI reporter: under CI=true a skipped test is named, and the closing
// line carries ", K skipped", which .ci/run refuses.
import { expect } from "chai";
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

async function runFixture(ci: boolean, fixture = "one-skipped.spec.cjs"): Promise<string> {
  const mocha = path.join(ROOT, "node_modules/mocha/bin/mocha.js");
  const args = [mocha, "--no-config", "--reporter", path.join(ROOT, "test/support/reporter.cjs"), path.join(ROOT, "test/support/fixtures", fixture)];
  const env = { ...process.env, CI: ci ? "true" : "" };
  // A failing run exits non-zero; its output is what is checked.
  const result = await promisify(execFile)(process.execPath, args, { cwd: ROOT, env }).catch((err: { stdout?: string }) => err);
  return result.stdout ?? "";
}

describe("test reporter (CI summary)", function () {
  this.timeout(30_000);

  it("names every skipped test under CI=true and reports it in the closing line .ci/run checks", async () => {
    const out = await runFixture(true);
    const lines = out.trim().split("\n");
    expect(lines.at(-1)).to.equal("1 passed, 0 failed, 1 skipped");
    expect(out).to.match(/skipped under CI=true[^\n]*\n\s+- fixture tier needs a server that is missing/);
    // .ci/run accepts exactly "N passed, 0 failed" and nothing after it.
    const ciRun = readFileSync(path.join(ROOT, ".ci/run"), "utf8");
    const accept = /grep -qE '(\^\[0-9\]\+ passed, 0 failed\$)'/.exec(ciRun)?.[1];
    expect(accept, "the summary check in .ci/run").to.be.a("string");
    expect(new RegExp(accept!).test(lines.at(-1)!)).to.equal(false);
    expect(new RegExp(accept!).test("12 passed, 0 failed")).to.equal(true);
  });

  it("repeats each failure in one line before the closing line, which .ci/run collects and prints again at its end", async () => {
    const out = await runFixture(true, "one-failed.spec.cjs");
    const lines = out.trim().split("\n");
    expect(lines.at(-1)).to.equal("1 passed, 1 failed");
    expect(lines.at(-3)).to.equal("FAILED: fixture suite breaks (test/support/fixtures/one-failed.spec.cjs): expected 200 to equal 503");
    const ciRun = readFileSync(path.join(ROOT, ".ci/run"), "utf8");
    const collect = /grep -E '(\^FAILED: )'/.exec(ciRun)?.[1];
    expect(collect, "the failure collection in .ci/run").to.be.a("string");
    expect(new RegExp(collect!).test(lines.at(-3)!)).to.equal(true);
  });

  it("only reports the count outside CI", async () => {
    const out = await runFixture(false);
    expect(out).to.not.include("skipped under CI=true");
    expect(out.trim().split("\n").at(-1)).to.equal("1 passed, 0 failed, 1 skipped");
  });
});
