// The embedded store must not take its process down when Node.js collects a dropped prepared
// statement. better-sqlite3 12 does on Node.js 24.19+ (an ObjectWrap destructor asserts a
// current context: SIGABRT in 7 of 10 runs of the churn below), which is why Node.js 22+ loads
// better-sqlite3 13 (lib/store/sqlite-binding.ts). Run on both Node.js lines by CI.
import { expect } from "chai";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { sqliteDriver, sqlitePackageFor } from "../../lib/store/sqlite-binding.js";

const churn = fileURLToPath(new URL("../support/sqlite-statement-churn.ts", import.meta.url));

async function runChurn(rounds: number): Promise<{ code: number | null; signal: string | null; out: string }> {
  const child = spawn(process.execPath, ["--import", "tsx", churn, String(rounds)], { stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  child.stdout.on("data", (b) => (out += b));
  child.stderr.on("data", (b) => (out += b));
  const [code, signal] = (await once(child, "exit")) as [number | null, string | null];
  return { code, signal, out };
}

describe("SQLite binding", function () {
  this.timeout(120_000);

  it("loads better-sqlite3 13 from Node.js 22 on and the 12.x build on Node.js 20", () => {
    expect(sqlitePackageFor("20.20.2")).to.equal("better-sqlite3-node20");
    expect(sqlitePackageFor("22.0.0")).to.equal("better-sqlite3");
    expect(sqlitePackageFor("24.21.0")).to.equal("better-sqlite3");
    const db = new (sqliteDriver())(":memory:");
    expect(db.prepare("SELECT 6 * 7 AS n").get()).to.deep.equal({ n: 42 });
    db.close();
  });

  it(`survives prepared statements being collected between awaited reads (Node.js ${process.versions.node})`, async () => {
    // Eight short runs: a run of the old binding on Node.js 24 survives about one time in three.
    for (let run = 0; run < 8; run++) {
      const r = await runChurn(400);
      expect(r.out, `run ${run + 1} exited ${r.code ?? r.signal}`).to.match(/^churned 400 statements, found 400$/m);
      expect({ code: r.code, signal: r.signal }).to.deep.equal({ code: 0, signal: null });
    }
  });
});
