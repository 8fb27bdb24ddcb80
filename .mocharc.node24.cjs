// The tiers CI runs a second time, on Node.js 24 (what the container image ships): those whose
// outcome depends on the runtime, not on our code alone. Everything else runs once, on Node.js 20
// (.mocharc.cjs). A file added here must exist (test/unit/ci-tiers.test.ts checks the list).
"use strict";
const base = require("./.mocharc.cjs");
const { longestFirst } = require("./test/support/test-order.cjs");

const runtimeTiers = {
  // The native SQLite binding (better-sqlite3 13 on Node.js 24, 12.x on 20: lib/store/sqlite-binding.ts).
  sqlite: [
    "test/unit/sqlite-binding.test.ts",
    "test/unit/sqlite-collection.test.ts",
    "test/contract/article-store.test.ts",
    "test/contract/stats-store.test.ts",
    "test/contract/pronunciation-store.test.ts",
    "test/contract/collection-filters.test.ts",
    "test/contract/store-failures.test.ts",
    "test/unit/nedb-upgrade.test.ts",
    "test/e2e/upgrade-from-nedb.test.ts",
    "test/e2e/upgrade-interrupted.test.ts",
    "test/e2e/storage-full.test.ts",
  ],
  // Processes, signals, worker threads, sockets and child programs.
  processes: [
    "test/e2e/process-lifetime.test.ts",
    "test/e2e/shutdown.test.ts",
    "test/e2e/keepalive-shutdown.test.ts",
    "test/e2e/first-start.test.ts",
    "test/unit/reserve-port.test.ts",
    "test/unit/worker-entry.test.ts",
    "test/unit/content-pool.test.ts",
    "test/audio/worker.test.ts",
    "test/audio/engine.test.ts",
    "test/services/auth-cli.test.ts",
    "test/unit/config.test.ts",
  ],
  // The runtime's fetch (undici) and HTTP server, as outbound calls and health checks use them.
  http: ["test/unit/safe-fetch.test.ts", "test/unit/webhook.test.ts", "test/gateway/health.test.ts"],
  // The embedded default end to end: the smoke test of the whole process as `npm start` runs it.
  embedded: ["test/e2e/embedded.test.ts"],
  // The reporter and its closing line, which .ci/run reads from this run too.
  reporter: ["test/unit/reporter.test.ts", "test/unit/ci-tiers.test.ts"],
};

module.exports = { ...base, spec: longestFirst(Object.values(runtimeTiers).flat()), runtimeTiers };
