// German on SVOX Pico against eSpeak NG (WASM), in the same run and process: audio seconds per
// CPU second of each (process CPU time: the engines' worker threads included), and Pico's first
// chunk latency. `npx tsx bench/voices-pico.ts` (BENCH_PICO_ROUNDS, default 3). Not part of
// `npm test`; needs Pico's language files (npm ci installs them).
import { createLocalEngine } from "../services/audio/engine/index.js";
import { createPicoEngine } from "../services/audio/engine/pico/index.js";
import type { SpeechEngine } from "../services/audio/engine/types.js";
import { mp3Duration } from "../services/audio/mp3/index.js";

const ROUNDS = Number(process.env.BENCH_PICO_ROUNDS ?? 3);

// About a minute of German news prose, in chunks the size the pipeline hands a local engine.
const CHUNKS = [
  "Der Stadtrat von Leipzig hat am Dienstag einen neuen Haushalt beschlossen.",
  "Für das kommende Jahr stehen rund zwei Komma vier Milliarden Euro zur Verfügung, etwa hundertachtzig Millionen mehr als bisher.",
  "Oberbürgermeister Burkhard Jung sprach von einem schwierigen Kompromiss zwischen den Fraktionen.",
  "Die meisten Mittel fließen in Schulen, Kitas und den öffentlichen Nahverkehr, der im Osten der Stadt ausgebaut werden soll.",
  "Kritik kam von der Opposition, die höhere Schulden und steigende Zinsen befürchtet.",
  "Die Verwaltung will die ersten Aufträge noch vor dem Sommer vergeben und die Bürger regelmäßig über den Stand informieren.",
];

async function measure(name: string, engine: SpeechEngine, voice: string): Promise<{ name: string; audioS: number; cpuS: number; wallS: number; firstMs: number }> {
  // Warm: JIT and threads up before the clock runs.
  await engine.synthesize({ text: CHUNKS[0], voice, lang: "de-DE" });
  let audioS = 0;
  let firstMs = 0;
  const cpu0 = process.cpuUsage();
  const wall0 = performance.now();
  for (let r = 0; r < ROUNDS; r++) {
    for (const text of CHUNKS) {
      const t0 = performance.now();
      const mp3 = await engine.synthesize({ text, voice, lang: "de-DE" });
      if (r === 0 && text === CHUNKS[0]) firstMs = performance.now() - t0;
      audioS += mp3Duration(mp3);
    }
  }
  const cpu = process.cpuUsage(cpu0);
  return { name, audioS, cpuS: (cpu.user + cpu.system) / 1e6, wallS: (performance.now() - wall0) / 1000, firstMs };
}

const espeak = await createLocalEngine({ threads: 1, native: "never" });
const pico = await createPicoEngine({ threads: 1 });
try {
  const rows = [await measure("eSpeak NG (WASM), Conrad", espeak, "de-DE-ConradNeural"), await measure("Pico, Katja", pico, "de-DE-KatjaNeural"), await measure("Pico, Conrad (70 % pitch)", pico, "de-DE-ConradNeural")];
  const ref = rows[0].audioS / rows[0].cpuS;
  console.log(`German, ${ROUNDS} x ${CHUNKS.length} chunks, one thread each (audio s per CPU s; ratio to eSpeak in this run)`);
  for (const r of rows) {
    const rate = r.audioS / r.cpuS;
    console.log(`${r.name.padEnd(28)} ${r.audioS.toFixed(1).padStart(6)} s audio  ${rate.toFixed(1).padStart(7)} audio-s/CPU-s  x${(rate / ref).toFixed(2)}  first chunk ${r.firstMs.toFixed(0)} ms  wall ${r.wallS.toFixed(2)} s`);
  }
} finally {
  await Promise.all([espeak.close(), pico.close()]);
}
