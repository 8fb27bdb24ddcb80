// Summarises a .cpuprofile: the functions with the most self time, so a
// profile can be quoted as evidence. Usage: node bench/profile-top.mjs FILE [N]
import { readFileSync } from "node:fs";

const [file, n = "30"] = process.argv.slice(2);
if (!file) {
  console.error("usage: node bench/profile-top.mjs FILE.cpuprofile [N]");
  process.exit(2);
}
const prof = JSON.parse(readFileSync(file, "utf8"));
const byId = new Map(prof.nodes.map((node) => [node.id, node]));
const self = new Map();
const dt = prof.timeDeltas;
for (let i = 0; i < prof.samples.length; i++) {
  const node = byId.get(prof.samples[i]);
  const cf = node.callFrame;
  const where = cf.url ? cf.url.replace(/^.*node_modules\//, "").replace(/^file:\/\/.*?\/main\//, "") : "";
  const key = `${cf.functionName || "(anonymous)"} ${where}:${cf.lineNumber + 1}`;
  self.set(key, (self.get(key) ?? 0) + (dt[i] ?? 0));
}
const total = [...self.values()].reduce((a, b) => a + b, 0);
const top = [...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, Number(n));
console.log(`total ${(total / 1e6).toFixed(2)} s sampled`);
for (const [k, us] of top) console.log(`${((100 * us) / total).toFixed(1).padStart(5)}%  ${(us / 1e3).toFixed(0).padStart(7)} ms  ${k}`);

// Self time per package or source file: which layer the CPU goes to.
const byFile = new Map();
for (let i = 0; i < prof.samples.length; i++) {
  const cf = byId.get(prof.samples[i]).callFrame;
  let where = cf.url || cf.functionName || "(native)";
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(where);
  if (m) where = m[1];
  else if (where.startsWith("node:")) where = where.split("/").slice(0, 2).join("/");
  else where = where.replace(/^file:\/\/.*?\/main\//, "");
  byFile.set(where, (byFile.get(where) ?? 0) + (dt[i] ?? 0));
}
console.log("\nby package / file:");
for (const [k, us] of [...byFile.entries()].sort((a, b) => b[1] - a[1]).slice(0, 25)) console.log(`${((100 * us) / total).toFixed(1).padStart(5)}%  ${k}`);
