// Mocha's spec output, followed by the one closing line CI reads:
// "N passed, M failed" (", K skipped" when tests were pending). Under CI=true
// a skipped test is a tier that did not run: each is named before the closing
// line, and .ci/run fails on the ", K skipped".
"use strict";
const Mocha = require("mocha");
const { Spec } = Mocha.reporters;
const { EVENT_RUN_END, EVENT_TEST_PENDING } = Mocha.Runner.constants;

class PassFailReporter extends Spec {
  constructor(runner, options) {
    super(runner, options);
    const skipped = [];
    runner.on(EVENT_TEST_PENDING, (test) => skipped.push(test.fullTitle()));
    runner.once(EVENT_RUN_END, () => {
      const s = runner.stats;
      // Deferred so it is the last line, after the spec reporter's epilogue.
      process.nextTick(() => {
        if (process.env.CI === "true" && skipped.length) {
          process.stdout.write(`\nskipped under CI=true (nothing may be):\n${skipped.map((t) => `  - ${t}`).join("\n")}\n`);
        }
        const pending = s.pending ? `, ${s.pending} skipped` : "";
        process.stdout.write(`\n${s.passes} passed, ${s.failures} failed${pending}\n`);
      });
    });
  }
}

module.exports = PassFailReporter;
