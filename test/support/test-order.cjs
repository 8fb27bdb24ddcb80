// The order mocha is given the test files in. With --parallel, files go to the workers in this
// order, so a long file that comes last runs alone while the other worker sits idle: in
// alphabetical order the console's browser suite (about 90 s) came last and set the suite's end.
// Starting the longest files first leaves only short ones for the end (longest-first
// scheduling). LONGEST_FIRST is kept by hand from the reporter's "slowest files" list in CI logs;
// a file missing from it only runs later, never not at all (test/unit/ci-tiers.test.ts checks
// that every name on it exists).
"use strict";
const fs = require("node:fs");
const path = require("node:path");

const ROOT = path.resolve(__dirname, "../..");
const SUITE_DIRS = ["test", "console/test"];

const LONGEST_FIRST = [
  "console/test/console-browser.test.ts",
  "test/e2e/process-lifetime.test.ts",
  "test/e2e/stack.test.ts",
  "test/listener/player-browser.test.ts",
  "test/audio/kokoro.test.ts",
  "test/e2e/kokoro-api.test.ts",
  "test/audio/sound.test.ts",
  "test/listener/listener-stack.test.ts",
  "test/e2e/import-stack.test.ts",
  "test/e2e/sources-stack.test.ts",
  "test/e2e/fairness.test.ts",
  "test/e2e/text-bounds.test.ts",
  "test/contract/bus.test.ts",
  "test/e2e/import.test.ts",
  "test/listener/forgery.test.ts",
  "test/e2e/upgrade-interrupted.test.ts",
  "test/e2e/embedded.test.ts",
];

function testFiles(dir) {
  return fs
    .readdirSync(path.join(ROOT, dir), { recursive: true })
    .filter((f) => f.endsWith(".test.ts"))
    .map((f) => path.posix.join(dir, f.split(path.sep).join("/")));
}

/** Every test file of the suite, longest first, then the rest in alphabetical order. */
function suiteFiles() {
  const all = SUITE_DIRS.flatMap(testFiles).sort();
  return longestFirst(all);
}

/** The given files, those on LONGEST_FIRST first (in its order), each once. */
function longestFirst(files) {
  const rank = new Map(LONGEST_FIRST.map((f, i) => [f, i]));
  const known = files.filter((f) => rank.has(f)).sort((a, b) => rank.get(a) - rank.get(b));
  return [...new Set([...known, ...files.filter((f) => !rank.has(f))])];
}

module.exports = { LONGEST_FIRST, suiteFiles, longestFirst };
