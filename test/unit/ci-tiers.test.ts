// CI runs the suite on Node.js 20 and again, only the runtime-dependent tiers, on Node.js 24
// (.mocharc.node24.cjs). A misspelt or moved file would silently drop out of that run: mocha
// only warns about a pattern that matches nothing.
import { expect } from "chai";
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

describe("CI's Node.js 24 tiers", () => {
  const config = createRequire(import.meta.url)(path.join(ROOT, ".mocharc.node24.cjs")) as { spec: string[]; reporter: string; runtimeTiers: Record<string, string[]> };

  it("names test files that exist, once each", () => {
    const missing = config.spec.filter((f) => !existsSync(path.join(ROOT, f)));
    expect(missing, "listed in .mocharc.node24.cjs but not found").to.deep.equal([]);
    expect(new Set(config.spec).size).to.equal(config.spec.length);
    expect(config.spec.every((f) => f.endsWith(".test.ts"))).to.equal(true);
  });

  it("covers the SQLite binding, process handling and the embedded default, with the summary reporter", () => {
    expect(config.runtimeTiers.sqlite).to.include("test/unit/sqlite-binding.test.ts");
    expect(config.runtimeTiers.processes).to.include("test/e2e/process-lifetime.test.ts");
    expect(config.runtimeTiers.embedded).to.include("test/e2e/embedded.test.ts");
    expect(config.reporter).to.equal("test/support/reporter.cjs");
  });

  it("is what .ci/run runs on Node.js 24", () => {
    const ciRun = readFileSync(path.join(ROOT, ".ci/run"), "utf8");
    expect(ciRun).to.include("npm run -s test:runtime");
  });
});

describe("The suite's file order", () => {
  const require = createRequire(import.meta.url);
  const order = require(path.join(ROOT, "test/support/test-order.cjs")) as { LONGEST_FIRST: string[]; suiteFiles(): string[] };
  const suite = (require(path.join(ROOT, ".mocharc.cjs")) as { spec: string[] }).spec;

  it("names only test files that exist among its longest-first files", () => {
    const missing = order.LONGEST_FIRST.filter((f) => !existsSync(path.join(ROOT, f)));
    expect(missing, "listed in test/support/test-order.cjs but not found").to.deep.equal([]);
  });

  it("gives mocha every test file once, the longest first", () => {
    expect(new Set(suite).size).to.equal(suite.length);
    expect(suite.slice(0, order.LONGEST_FIRST.length)).to.deep.equal(order.LONGEST_FIRST);
    expect(suite).to.include("test/unit/ci-tiers.test.ts");
    expect(suite).to.include("console/test/console-static.test.ts");
  });
});

