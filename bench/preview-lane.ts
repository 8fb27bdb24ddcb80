// `npm run bench:preview-lane`: audio on demand on the embedded default, as
// `npm start` runs it (AUDIO_CONCURRENCY 2, the local engine). How long a
// listener waits from the first lookup until the preview can be played: one
// listener at a time, then five pressing play at once (issue 33, point 10:
// each within 3 s on an idle 2-core machine). Every article is new text, so
// no chunk comes from the cache; a round starts once the previous one's full
// renders are done (an idle machine). The reference, measured in the same
// run (the rounds alternate), is one listener alone: the five-at-once figures
// are printed as ratios to it. In the preview lane the fifth of five waits for
// four previews, not four whole articles: with two renders at once, about 3x.
import { mkdirSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import os, { tmpdir } from "node:os";
import path, { dirname, join } from "node:path";
import { Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import { AuthService } from "../gen/auth/v1/auth_pb.js";
import { startEmbedded } from "../launch/embedded.js";
import { rpcClient } from "../lib/rpc/client.js";
import { quantile } from "./quantile.js";

const HERE = dirname(fileURLToPath(import.meta.url));
const ADMIN = "bench-preview-lane-admin-0123456789";
const TOKEN = "bench-preview-lane-token-0123456789";
const PROJECT = "lane";
const ROUNDS_ONE = Number(process.env.BENCH_LANE_ROUNDS_ONE ?? 6);
const ROUNDS_FIVE = Number(process.env.BENCH_LANE_ROUNDS_FIVE ?? 4);
const CHARS = Number(process.env.BENCH_LANE_CHARS ?? 5_000);
const TARGET_MS = 3_000;

const WORDS = "harbour council budget river library station garden festival bridge market school museum tram archive forest theatre".split(" ");
/** Text nobody rendered before: every sentence names the article and its place in it. */
function freshText(n: number, chars: number): string {
  const out: string[] = [];
  let i = 0;
  while (out.join(" ").length < chars) {
    const w = (k: number) => WORDS[(n * 7 + i * 3 + k) % WORDS.length];
    out.push(`Report ${n} notes that the ${w(0)} plan number ${i + 1} changes the ${w(1)} and the ${w(2)} near the old ${w(3)}.`);
    i++;
  }
  return out.join(" ").slice(0, chars);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function main(): Promise<void> {
  const dataDir = await mkdtemp(path.join(tmpdir(), "bench-preview-lane-"));
  const quiet = new Writable({ write: (_c, _e, cb) => cb() });
  const sys = await startEmbedded(
    {
      PORT: "0",
      HOST: "127.0.0.1",
      DATA_DIR: dataDir,
      ADMIN_TOKEN: ADMIN,
      SEED_TOKENS: JSON.stringify([{ token: TOKEN, project: PROJECT, scope: "full" }]),
      // The bench is one client asking for many renders: its own limits are not what is measured.
      // The lane's order is what is measured, with the engine the figures before it had; Kokoro's own
      // time to a preview is in bench/kokoro.ts. LOCAL_ENGINES=kokoro,pico,espeak measures both at once.
      LOCAL_ENGINES: process.env.LOCAL_ENGINES ?? "espeak",
      ON_DEMAND_RENDERS_BURST: "100000",
      ON_DEMAND_RENDERS_PER_ADDRESS_BURST: "100000",
      PLAYER_LOOKUPS_PER_ADDRESS_BURST: "100000",
      PLAYER_LOOKUPS_PER_ADDRESS_PER_SECOND: "10000",
      RATE_LIMIT_READS_PER_SECOND: "100000",
      RATE_LIMIT_READS_BURST: "100000",
      AUDIO_ENGINE: process.env.AUDIO_ENGINE,
    },
    quiet,
  );
  try {
    const auth = rpcClient(AuthService, sys.services[0].url, { token: ADMIN });
    await auth.updateProjectSettings({ projectId: PROJECT, patchJson: JSON.stringify({ audio: "onDemand" }) });
    const headers = { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" };
    const key = ((await (await fetch(`${sys.url}/api/player`, { headers })).json()) as { publicKey: string }).publicKey;
    let n = 0;
    const create = async () => {
      n++;
      const r = await fetch(`${sys.url}/api/articles`, { method: "POST", headers, body: JSON.stringify({ title: `Report ${n}`, text: freshText(n, CHARS) }) });
      return ((await r.json()) as { id: string }).id;
    };
    const lookup = async (id: string) => ((await (await fetch(`${sys.url}/player/v1/article?key=${key}&id=${id}`)).json()) as { article?: { audio?: string; audio_preview?: string } }).article;
    /** A listener: first lookup → preview playable (as the player, only polling faster), ms. */
    const listen = async (id: string) => {
      const t0 = performance.now();
      for (;;) {
        const a = await lookup(id);
        if (a?.audio_preview) {
          await (await fetch(a.audio_preview)).arrayBuffer();
          return performance.now() - t0;
        }
        await sleep(25);
      }
    };
    const whole = async (ids: string[]) => {
      for (;;) {
        const all = await Promise.all(ids.map(lookup));
        if (all.every((a) => a?.audio)) return;
        await sleep(200);
      }
    };

    // A warm-up render (the engine's first load is not what is measured).
    const warm = await create();
    await listen(warm);
    await whole([warm]);

    // Alternating in one sitting, so that a change in the machine's load meets both alike.
    const one: number[] = [];
    const five: number[] = [];
    for (let r = 0; r < Math.max(ROUNDS_ONE, ROUNDS_FIVE); r++) {
      if (r < ROUNDS_ONE) {
        const id = await create();
        one.push(await listen(id));
        await whole([id]);
      }
      if (r < ROUNDS_FIVE) {
        const ids = await Promise.all(Array.from({ length: 5 }, create));
        five.push(...(await Promise.all(ids.map(listen))));
        await whole(ids);
      }
    }

    const fig = (xs: number[]) => ({ p50: Math.round(quantile(xs, 0.5)), max: Math.round(Math.max(...xs)), within3s: xs.filter((x) => x <= TARGET_MS).length, n: xs.length });
    const res = { one: fig(one), five: fig(five) };
    const ratio = (x: number) => (x / res.one.p50).toFixed(2);
    const lines = [
      `preview lane (embedded default, ${os.cpus().length} cores, load ${os.loadavg()[0].toFixed(1)}, ${CHARS}-character articles, new text each)`,
      `  1 listener      : p50 ${res.one.p50} ms, max ${res.one.max} ms, ${res.one.within3s}/${res.one.n} within 3 s (the reference)`,
      `  5 at once       : p50 ${res.five.p50} ms (${ratio(res.five.p50)}x), max ${res.five.max} ms (${ratio(res.five.max)}x), ${res.five.within3s}/${res.five.n} within 3 s`,
      `  target          : each within ${TARGET_MS} ms on an idle 2-core machine: ${res.five.max <= TARGET_MS && res.one.max <= TARGET_MS ? "met" : "missed"}`,
    ];
    console.log(lines.join("\n"));
    const dir = join(HERE, "results");
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "preview-lane.json"), JSON.stringify({ at: new Date().toISOString(), loadavg: os.loadavg(), ...res, raw: { one, five } }, null, 2));
  } finally {
    await sys.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

await main();
