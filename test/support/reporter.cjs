// Mocha's spec output, followed by the one closing line CI reads:
// "N passed, M failed" (", K skipped" when tests were pending).
"use strict";
const Mocha = require("mocha");
const { Spec } = Mocha.reporters;
const { EVENT_RUN_END } = Mocha.Runner.constants;

class PassFailReporter extends Spec {
  constructor(runner, options) {
    super(runner, options);
    runner.once(EVENT_RUN_END, () => {
      const s = runner.stats;
      // Deferred so it is the last line, after the spec reporter's epilogue.
      process.nextTick(() => {
        const skipped = s.pending ? `, ${s.pending} skipped` : "";
        process.stdout.write(`\n${s.passes} passed, ${s.failures} failed${skipped}\n`);
      });
    });
  }
}

module.exports = PassFailReporter;
