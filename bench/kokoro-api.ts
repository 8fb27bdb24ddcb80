// Rendering never costs the API its latency (issue 34, point 5): on the embedded default
// (`npm start`'s process), another project's reads and creates while Kokoro renders long English
// articles on both cores, beside the same measure with nothing rendering, in the same run.
// Targets on two cores: reads p99 < 100 ms, creates p99 <= 20 ms with Kokoro busy.
//   npx tsx bench/kokoro-api.ts   (BENCH_API_WINDOW_MS, default 20000; LOCAL_ENGINES, default kokoro,espeak)
import os from "node:os";
import { apiBesideRender, describeApi } from "../test/support/api-beside-render.js";

export async function benchKokoroApi(): Promise<string> {
  const load0 = os.loadavg()[0];
  const r = await apiBesideRender({ env: { LOCAL_ENGINES: process.env.LOCAL_ENGINES ?? "kokoro,espeak" }, windowMs: Number(process.env.BENCH_API_WINDOW_MS ?? 20_000), articles: 2, chars: 6_000 });
  const kokoro = !/Kokoro \(English\) not loaded/.test(r.stderr);
  const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}x`;
  return [
    `Another project's API beside ${kokoro ? "Kokoro" : "eSpeak (Kokoro did not load)"} rendering (embedded default; targets reads p99 < 100 ms, creates p99 <= 20 ms):`,
    `    nothing rendering: ${describeApi(r.idle)}`,
    `    rendering:         ${describeApi(r.busy)}${r.stillRendering ? "" : " (the renders ended inside the window)"}`,
    `    rendering/idle p99: reads ${ratio(r.busy.reads.p99, r.idle.reads.p99)}, creates ${ratio(r.busy.creates.p99, r.idle.creates.p99)}; load average ${load0.toFixed(2)} -> ${os.loadavg()[0].toFixed(2)}`,
  ].join("\n  ");
}

if (import.meta.url === `file://${process.argv[1]}`) console.log(`  ${await benchKokoroApi()}`);
