// The whole suite, as `npm test` runs it (Node.js 20 in CI; .mocharc.node24.cjs runs the
// runtime-dependent tiers again on Node.js 24). Files are listed longest first
// (test/support/test-order.cjs).
"use strict";
const { suiteFiles } = require("./test/support/test-order.cjs");

module.exports = {
  "node-option": ["import=tsx"],
  spec: suiteFiles(),
  timeout: 30000,
  reporter: "test/support/reporter.cjs",
  exit: true,
};
