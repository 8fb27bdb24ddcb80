// Mocha's spec output, followed by the one closing line CI reads:
// "N passed, M failed" (", K skipped" when tests were pending). Under CI=true
// a skipped test is a tier that did not run: each is named before the closing
// line, and .ci/run fails on the ", K skipped". Before it, the slowest files
// (hooks included) so a CI log shows where the suite's time goes, and each
// failure again in one line ("FAILED: title (file): message"), because CI shows
// only the end of a long log and .ci/run repeats these lines after its summary.
"use strict";
const path = require("node:path");
const Mocha = require("mocha");
const { Spec } = Mocha.reporters;
const { EVENT_RUN_END, EVENT_TEST_FAIL, EVENT_TEST_PENDING, EVENT_SUITE_BEGIN, EVENT_SUITE_END, EVENT_TEST_END } = Mocha.Runner.constants;

const SLOWEST = Number(process.env.TEST_SLOWEST_FILES ?? 15);

class PassFailReporter extends Spec {
  constructor(runner, options) {
    super(runner, options);
    const skipped = [];
    // Wall time per file, from its first top-level suite's start to its last one's end. In parallel
    // mode a file's events arrive all at once when it is done, so there it is its tests' time only.
    const parallel = typeof runner.isParallelMode === "function" && runner.isParallelMode();
    const files = new Map();
    const started = Date.now();
    // In parallel mode, when each file's results came in (seconds since the run began): the last
    // ones show whether one long file held the end of the run alone (test/support/test-order.cjs).
    const entry = (file) => files.get(file) ?? files.set(file, { ms: 0, since: 0, doneAt: (Date.now() - started) / 1000 }).get(file);
    const isTopLevel = (suite) => suite.parent && suite.parent.root && suite.file;
    if (parallel) {
      runner.on(EVENT_TEST_END, (test) => test.file && (entry(test.file).ms += test.duration ?? 0));
    } else {
      runner.on(EVENT_SUITE_BEGIN, (suite) => isTopLevel(suite) && (entry(suite.file).since = Date.now()));
      runner.on(EVENT_SUITE_END, (suite) => {
        const f = isTopLevel(suite) && files.get(suite.file);
        if (f && f.since) f.ms += Date.now() - f.since;
      });
    }
    runner.on(EVENT_TEST_PENDING, (test) => skipped.push(test.fullTitle()));
    const failed = [];
    runner.on(EVENT_TEST_FAIL, (test, err) => {
      const file = test.file ? ` (${path.relative(process.cwd(), test.file)})` : "";
      const message = String(err?.message ?? err).split("\n")[0].slice(0, 300);
      failed.push(`FAILED: ${test.fullTitle()}${file}: ${message}`);
    });
    runner.once(EVENT_RUN_END, () => {
      const s = runner.stats;
      // Deferred so it is the last line, after the spec reporter's epilogue.
      process.nextTick(() => {
        const slow = [...files].sort((a, b) => b[1].ms - a[1].ms).slice(0, SLOWEST);
        if (files.size > 1 && slow.length) {
          const total = [...files.values()].reduce((t, f) => t + f.ms, 0);
          const lines = slow.map(([file, f]) => `  ${(f.ms / 1000).toFixed(1).padStart(7)} s  ${path.relative(process.cwd(), file)}`);
          const what = parallel ? "tests' time, hooks not counted" : `${(total / 1000).toFixed(0)} s in all`;
          process.stdout.write(`\nslowest files (of ${files.size}, ${what}):\n${lines.join("\n")}\n`);
          if (parallel) {
            const last = [...files].sort((a, b) => b[1].doneAt - a[1].doneAt).slice(0, 5);
            const ends = last.map(([file, f]) => `  ${f.doneAt.toFixed(0).padStart(5)} s  ${path.relative(process.cwd(), file)}`);
            process.stdout.write(`last files to finish (seconds into the run):\n${ends.join("\n")}\n`);
          }
        }
        if (process.env.CI === "true" && skipped.length) {
          process.stdout.write(`\nskipped under CI=true (nothing may be):\n${skipped.map((t) => `  - ${t}`).join("\n")}\n`);
        }
        if (failed.length) process.stdout.write(`\n${failed.join("\n")}\n`);
        const pending = s.pending ? `, ${s.pending} skipped` : "";
        process.stdout.write(`\n${s.passes} passed, ${s.failures} failed${pending}\n`);
      });
    });
  }
}

module.exports = PassFailReporter;
