// Finds the stretches of a .cpuprofile where the main thread never went idle for longer
// than a threshold (a stalled event loop), and prints, for each, the call stacks that
// took most of it: the background work behind a slow read.
//   node bench/profile-stalls.mjs FILE.cpuprofile [minimum ms, default 200] [skip the first S seconds (start-up), default 0]
// Many short stalls (a p99 of tens of ms) are best read together: the last section sums them all.
import { readFileSync } from "node:fs";

const [file, minimum = "200", skipSeconds = "0"] = process.argv.slice(2);
if (!file) {
  console.error("usage: node bench/profile-stalls.mjs FILE.cpuprofile [minimum ms] [skip seconds]");
  process.exit(2);
}
const prof = JSON.parse(readFileSync(file, "utf8"));
const byId = new Map(prof.nodes.map((node) => [node.id, node]));
const parent = new Map();
for (const node of prof.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
const name = (node) => {
  const cf = node.callFrame;
  const where = cf.url ? cf.url.replace(/^.*node_modules\//, "").replace(/^file:\/\/.*?\/(main|wt\/[^/]+)\//, "") : "";
  return `${cf.functionName || "(anonymous)"} ${where}:${cf.lineNumber + 1}`;
};
const stackOf = (id) => {
  const out = [];
  for (let at = id; at !== undefined; at = parent.get(at)) out.push(name(byId.get(at)));
  return out;
};
const idle = (id) => byId.get(id).callFrame.functionName === "(idle)";

let t = prof.startTime;
const samples = prof.samples.map((id, i) => ({ id, at: (t += prof.timeDeltas[i] ?? 0) }));
const stalls = [];
let from = -1;
for (let i = 0; i <= samples.length; i++) {
  const busy = i < samples.length && !idle(samples[i].id);
  if (busy && from < 0) from = i;
  if (!busy && from >= 0) {
    const ms = (samples[i - 1].at - samples[from].at) / 1000;
    const after = (samples[from].at - prof.startTime) / 1e6;
    if (ms >= Number(minimum) && after >= Number(skipSeconds)) stalls.push({ from, to: i, ms });
    from = -1;
  }
}
console.log(`${stalls.length} stretch(es) of at least ${minimum} ms without idle time`);
const printTop = (ranges, lines) => {
  const byFrame = new Map();
  for (const s of ranges) {
    for (let i = s.from; i < s.to; i++) {
      for (const frame of new Set(stackOf(samples[i].id))) byFrame.set(frame, (byFrame.get(frame) ?? 0) + (prof.timeDeltas[i] ?? 0));
    }
  }
  const top = [...byFrame].sort((a, b) => b[1] - a[1]).slice(0, lines);
  for (const [frame, us] of top) console.log(`${(us / 1000).toFixed(0).padStart(7)} ms  ${frame}`);
};
for (const s of stalls) {
  console.log(`\n== ${s.ms.toFixed(0)} ms busy, from ${((samples[s.from].at - prof.startTime) / 1e6).toFixed(1)} s into the profile`);
  printTop([s], 25);
}
if (stalls.length > 1) {
  console.log(`\n== all ${stalls.length} together: ${stalls.reduce((n, s) => n + s.ms, 0).toFixed(0)} ms`);
  printTop(stalls, 60);
}
