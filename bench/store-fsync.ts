// What durability costs a create in the embedded store: the writes of one
// POST (insert, admission claim, admission result) with 50 creates in flight,
// acknowledged after a group-committed durable commit against the same
// store acknowledging as soon as the lines are in the page cache (the
// behaviour before fsync), measured alternately in the same run on the same
// disk. Prints creates/s, CPU per create and the ratio.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { openEmbeddedArticleStore } from "../services/articles/store/open.js";

export interface FsyncFigures {
  durable: { createsPerSec: number; cpuMsPerCreate: number };
  reference: { createsPerSec: number; cpuMsPerCreate: number };
  ratio: number;
  dir: string;
}

const TEXT = "The quick brown fox jumps over the lazy dog while the bench clock keeps running. ".repeat(26).slice(0, 2000);

async function oneRun(durable: boolean, seconds: number, concurrency: number, runNo: number): Promise<{ creates: number; ms: number; cpuMs: number }> {
  const dir = await mkdtemp(path.join(process.env.BENCH_FSYNC_DIR ?? tmpdir(), "bench-fsync-"));
  const store = await openEmbeddedArticleStore({ dataDir: dir, durable });
  let creates = 0;
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  const end = t0 + seconds * 1000;
  try {
    await Promise.all(
      Array.from({ length: concurrency }, async (_, w) => {
        for (let i = 0; performance.now() < end; i++) {
          const id = `r${runNo}-w${w}-${i}`;
          await store.insert({ id, projectId: "bench", title: "Bench", text: TEXT, voice: "alloy", lang: "en-US", labels: [], isRaw: false, parse: false, admission: "pending" });
          await store.claimAdmission(id, 1, 60_000);
          await store.finishAdmission(id, 1, { status: "waiting", types: [], keepPending: false });
          creates++;
        }
      }),
    );
    const cpu = process.cpuUsage(cpu0);
    return { creates, ms: performance.now() - t0, cpuMs: (cpu.user + cpu.system) / 1000 };
  } finally {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  }
}

export async function benchStoreFsync(seconds = 3, runs = 3, concurrency = 50): Promise<FsyncFigures> {
  const sum = { durable: { creates: 0, ms: 0, cpuMs: 0 }, reference: { creates: 0, ms: 0, cpuMs: 0 } };
  await oneRun(true, 1, concurrency, -1); // warm-up
  for (let r = 0; r < runs; r++) {
    // Alternating, so a change in machine load hits both sides alike.
    for (const durable of r % 2 ? [false, true] : [true, false]) {
      const x = await oneRun(durable, seconds, concurrency, r * 2 + (durable ? 0 : 1));
      const s = durable ? sum.durable : sum.reference;
      s.creates += x.creates;
      s.ms += x.ms;
      s.cpuMs += x.cpuMs;
    }
  }
  const fig = (s: { creates: number; ms: number; cpuMs: number }) => ({ createsPerSec: (s.creates / s.ms) * 1000, cpuMsPerCreate: s.cpuMs / s.creates });
  const durable = fig(sum.durable);
  const reference = fig(sum.reference);
  return { durable, reference, ratio: durable.createsPerSec / reference.createsPerSec, dir: process.env.BENCH_FSYNC_DIR ?? tmpdir() };
}

export function formatStoreFsync(f: FsyncFigures): string {
  const row = (name: string, x: { createsPerSec: number; cpuMsPerCreate: number }) => `${name}: ${x.createsPerSec.toFixed(0)} creates/s, ${x.cpuMsPerCreate.toFixed(3)} ms CPU per create`;
  return [
    row("fdatasync + group commit", f.durable),
    row("reference, no fsync    ", f.reference),
    `ratio ${f.ratio.toFixed(2)} × reference (store writes of a create, 50 in flight, on ${f.dir})`,
  ].join("\n  ");
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const f = await benchStoreFsync(Number(process.env.BENCH_DURATION ?? 3), Number(process.env.BENCH_RUNS ?? 3));
  console.log(`  ${formatStoreFsync(f)}`);
}
