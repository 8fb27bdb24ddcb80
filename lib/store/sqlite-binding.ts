// Which better-sqlite3 build this Node.js loads.
//
// better-sqlite3 12 wraps its objects in node::ObjectWrap, whose destructor on Node.js 24.19
// and later asserts that a JavaScript context is current. A Statement collected by a GC that
// runs outside one (an idle GC, or any GC after an awaited read) aborts the whole process
// (SIGABRT, "Assertion failed: (env) != nullptr"). better-sqlite3 13 is built on Node-API and
// is immune, but it needs Node.js 22 or later and segfaults on Node.js 20. So both are
// installed: 13 under its own name, 12 as the optional alias better-sqlite3-node20, and each
// Node.js line loads the one that works on it. test/unit/sqlite-binding.test.ts reproduces
// the abort.
import { createRequire } from "node:module";
import type BetterSqlite3 from "better-sqlite3";

export type SqliteDriver = typeof BetterSqlite3;

/** The package this Node.js loads: better-sqlite3 from Node.js 22 on, else its 12.x alias. */
export function sqlitePackageFor(nodeVersion: string = process.versions.node): string {
  return Number(nodeVersion.split(".")[0]) >= 22 ? "better-sqlite3" : "better-sqlite3-node20";
}

let driver: SqliteDriver | undefined;

/** better-sqlite3's Database class from the build that runs on this Node.js. */
export function sqliteDriver(): SqliteDriver {
  if (driver) return driver;
  const name = sqlitePackageFor();
  const require = createRequire(import.meta.url);
  try {
    driver = require(name) as SqliteDriver;
  } catch (e) {
    const why = e instanceof Error ? e.message.split("\n")[0] : String(e);
    throw new Error(
      `the embedded store's SQLite binding (${name}) does not load on Node.js ${process.versions.node}: ${why}. ` +
        (name === "better-sqlite3"
          ? "Run npm ci again."
          : "On Node.js 20 npm ci builds it from source, which needs Python 3, make and a C++ compiler (Debian: apt-get install python3 make g++); install them and run npm ci again (where nodejs.org is out of reach, node-gyp cannot download Node.js's headers either: point it at the local ones, e.g. Debian's nodejs package: npm_config_nodedir=/usr npm ci), or use Node.js 24."),
    );
  }
  return driver;
}

/** An error of the SQLite engine (its `code`, e.g. SQLITE_FULL), from whichever build is loaded. */
export function isSqliteError(e: unknown): e is InstanceType<SqliteDriver["SqliteError"]> {
  return e instanceof sqliteDriver().SqliteError;
}
