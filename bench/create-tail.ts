// The tail of POST /api/articles while the articles before it render: sequential creates on a
// fresh embedded default, each rendered at once by the local engine (or none rendered, with
// BENCH_CREATE_AUDIO=onDemand: the floor), with p50/p90/p99 and when the slowest came.
//   npx tsx bench/create-tail.ts   (BENCH_CREATES=500, BENCH_CREATE_AUDIO=immediate|onDemand,
//   BENCH_CPU_PROF=DIR profiles the system under test for bench/profile-stalls.mjs)
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "../lib/net/free-port.js";
import { EMBEDDED_TOKEN, memoryOf, startEmbeddedProcess, treeMemoryOf } from "../test/support/embedded-process.js";
import { quantile } from "./quantile.js";

const creates = Number(process.env.BENCH_CREATES ?? 500);
const audio = process.env.BENCH_CREATE_AUDIO ?? "immediate";
const ADMIN_TOKEN = "create-tail-admin-token-0123456789";
const words = "the of and to a in that is was he for it with as his on be at by this had not are but from or have an they which one you were her all she there would their".split(" ");
const text = (i: number) => Array.from({ length: 180 }, (_, k) => words[(i * 7 + k * 13) % words.length]).join(" ") + ".";

const dir = mkdtempSync(join(tmpdir(), "create-tail-"));
const authPort = await freePort("127.0.0.1");
const nodeArgs = process.env.BENCH_CPU_PROF ? ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [];
const sys = await startEmbeddedProcess(dir, { RATE_LIMIT_WRITES_PER_SECOND: "100000", RATE_LIMIT_WRITES_BURST: "1000000", AUTH_PORT: String(authPort), ADMIN_TOKEN }, nodeArgs);
try {
  if (audio === "onDemand") {
    execFileSync(process.execPath, ["--import", "tsx", "services/auth/cli.ts", "settings:set", "measured", "audio=onDemand"], {
      env: { ...process.env, AUTH_URL: `http://127.0.0.1:${authPort}`, ADMIN_TOKEN },
      stdio: "ignore",
    });
  }
  const times: Array<{ ms: number; atS: number }> = [];
  const t0 = performance.now();
  for (let i = 0; i < creates; i++) {
    const sent = performance.now();
    const res = await fetch(`${sys.url}/api/articles`, {
      method: "POST",
      headers: { authorization: `Bearer ${EMBEDDED_TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ title: `Article ${i}`, text: text(i), externalId: `tail-${i}` }),
    });
    await res.text();
    if (res.status >= 300) throw new Error(`create ${i}: ${res.status}`);
    times.push({ ms: performance.now() - sent, atS: (sent - t0) / 1000 });
  }
  const ms = times.map((t) => t.ms);
  const q = (p: number) => quantile(ms, p);
  console.log(`${creates} creates, audio ${audio}: p50 ${q(0.5).toFixed(1)} ms, p90 ${q(0.9).toFixed(1)} ms, p99 ${q(0.99).toFixed(1)} ms, max ${q(1).toFixed(1)} ms`);
  const slowest = times.filter((t) => t.ms >= q(0.99)).map((t) => `${t.ms.toFixed(0)} ms at ${t.atS.toFixed(2)} s`);
  console.log(`slowest: ${slowest.join(", ")}`);
  if (sys.child.pid) {
    const own = memoryOf(sys.child.pid);
    const all = treeMemoryOf(sys.child.pid);
    console.log(`RSS: service process ${own.rss.toFixed(0)} MB (peak ${own.peak.toFixed(0)}), with the private memory of what it started ${all.rss.toFixed(0)} MB over ${all.processes} processes`);
  }
} finally {
  await sys.stop();
  rmSync(dir, { recursive: true, force: true });
}
