// Before/after of a read-path change in one sitting (issue 33): the embedded
// default of two work trees (e.g. `git worktree add --detach /tmp/before main`
// with node_modules linked in), both started as `npm start` runs them (access
// log on) and seeded alike, loaded in turns, run against run: GET by id over
// all ids, over 1,000 ids, and the 95/5 read/write mix, with a run of the bare
// Koa reference (bench/read-path.ts) before each round. Each system idles while
// the other is measured, so their CPU per request (user + system of the whole
// process) is compared under the same load of the shared machine; a round's
// figure is after/before, and the medians are printed.
//
//   TREES=/tmp/before,/work/wt/me NAMES=before,after npx tsx bench/read-path-ab.ts
//
// Variables: TREES, NAMES (comma-separated, the last is compared with the
// first), R rounds (5), D seconds per run (3), N articles (10000), CASES
// (ids10000,ids1000,mix). Each tree's own bench/harness.ts starts its system.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { median } from "./harness.js";

type Harness = typeof import("./harness.js");
type System = Exclude<Awaited<ReturnType<Harness["startSut"]>>, string>;

const trees = (process.env.TREES ?? "").split(",").filter(Boolean);
if (trees.length < 2) throw new Error("TREES: two or more work trees, comma-separated (the first is the baseline)");
const names = process.env.NAMES ? process.env.NAMES.split(",") : trees.map((t) => t.split("/").pop()!);
const D = Number(process.env.D ?? 3);
const R = Number(process.env.R ?? 5);
const N = Number(process.env.N ?? 10_000);
const cases = (process.env.CASES ?? "ids10000,ids1000,mix").split(",");

// The articles of bench/read-path.ts: ~1,200 characters each, every one different.
const WORDS = "harbour council budget river station morning school market summer bridge library festival weather railway garden museum".split(" ");
function textOf(i: number, chars: number): string {
  let s = `Article ${i}.`;
  for (let k = 0; s.length < chars; k++) s += ` ${WORDS[(i * 7 + k * k) % WORDS.length]}${k % 9 === 8 ? "." : ""}`;
  return s;
}

/** Waits (up to 20 s) until the system uses under a tenth of a core: a mix's writes must not spill into the next run. */
async function idle(s: System): Promise<void> {
  for (let i = 0; i < 40; i++) {
    const c = await s.cpuMs();
    await new Promise((r) => setTimeout(r, 500));
    if ((await s.cpuMs()) - c < 50) return;
  }
}

/** One load run: the system's CPU per answered request, in µs. */
async function run(h: Harness, s: System, kind: string, idsFile: string): Promise<{ us: number; bad: number }> {
  const c0 = await s.cpuMs();
  const r = await h.load({ url: s.url, kind, idsFile, duration: D });
  const c = (await s.cpuMs()) - c0;
  return { us: (1000 * c) / r.total, bad: r.non2xx + r.errors + r.timeouts };
}

const dir = mkdtempSync(join(os.tmpdir(), "bench-read-ab-"));
const hs: Harness[] = [];
for (const t of trees) hs.push((await import(`${t}/bench/harness.ts`)) as Harness);
const suts = await Promise.all(
  hs.map(async (h) => {
    const s = await h.startSut("embedded", { LOG_LEVEL: "info", BENCH_AUDIO: "onDemand" }, h.npmStartNodeFlags());
    if (typeof s === "string") throw new Error(s);
    return s;
  }),
);
const ids = await Promise.all(hs.map((h, i) => h.createArticles(suts[i].url, N, (k) => ({ title: `Read path ${k}`, text: textOf(k, 1200) }), 16)));
console.log(`seeded ${N} articles in each of ${names.join(", ")}; load ${os.loadavg()[0].toFixed(1)}`);
const files = ids.map((x, i) => {
  const all = join(dir, `ids-${i}.json`);
  const some = join(dir, `ids-${i}-1000.json`);
  writeFileSync(all, JSON.stringify(x));
  writeFileSync(some, JSON.stringify(x.slice(0, 1000)));
  return { all, some };
});
// The reference answers the last system's own answers, by id.
const last = hs.length - 1;
const bodies: Record<string, unknown> = {};
for (const id of ids[last]) bodies[id] = await hs[last].api(suts[last].url, "GET", `/api/articles/${encodeURIComponent(id)}`);
writeFileSync(join(dir, "bodies.json"), JSON.stringify(bodies));
const ref = await hs[last].startSut("reference", { BENCH_REFERENCE_BODIES: join(dir, "bodies.json") });
if (typeof ref === "string") throw new Error(ref);

for (const c of cases) {
  const kind = c === "mix" ? "mix95" : "getById";
  const pick = (i: number) => (c === "ids1000" ? files[i].some : files[i].all);
  for (let i = 0; i < hs.length; i++) await hs[i].load({ url: suts[i].url, kind, idsFile: pick(i), duration: 2 });
  const us: number[][] = hs.map(() => []);
  const refUs: number[] = [];
  const rel: number[] = [];
  for (let r = 0; r < R; r++) {
    // Every other round the other one goes first.
    const order = r % 2 ? [...hs.keys()].reverse() : [...hs.keys()];
    for (const s of suts) await idle(s);
    const rf = await run(hs[last], ref, "reference", files[last].all);
    refUs.push(rf.us);
    const got: number[] = [];
    for (const i of order) {
      const x = await run(hs[i], suts[i], kind, pick(i));
      us[i].push(x.us);
      got[i] = x.us;
      if (x.bad) console.log(`  ${names[i]}: ${x.bad} errors or non-2xx`);
    }
    rel.push(got[last] / got[0]);
    console.log(`  ${c} round ${r}: ref ${rf.us.toFixed(0)} ${names.map((n, i) => `${n} ${got[i].toFixed(0)}`).join(" ")} µs/req  load ${os.loadavg()[0].toFixed(1)}`);
  }
  const ratios = names.map((n, i) => `${n} ${median(us[i]).toFixed(0)} (×ref ${(median(refUs) / median(us[i])).toFixed(2)})`);
  console.log(`${c}: median µs/req ref ${median(refUs).toFixed(0)}, ${ratios.join(", ")}; ${names[last]}/${names[0]} per round, median ${median(rel).toFixed(3)}`);
}
await Promise.all([...suts, ref].map((s) => s.stop()));
rmSync(dir, { recursive: true, force: true });
process.exit(0);
