// Audio on demand as a listener meets it (issue 34, point 5), on the embedded default (`npm start`'s
// process) with Kokoro, beside eSpeak in the same run: a parked article's player lookup (which asks
// for the render), its live stream (audio_live) read as an <audio> element would, then the lookup
// repeated as the player does until the preview and the full file are there. All timed from the
// lookup; targets on 2 idle cores: first sound within 3 s, a 30 s preview within 15 s, a 5-minute
// article within 150 s. Also whether the stream stays ahead of playback (the stalls a listener who
// started at the first bytes would hear), and the memory (PSS) of the service with everything it
// started, idle and while rendering (target ≤ 900 MB).
//
// On a shared machine the absolute times say little (the speech host is niced and yields to every
// other process), so each Kokoro run also prints where its time went, from the service's own log
// lines (debug level): queue, the first chunk's model calls (wall and CPU), encoding, storing, and
// the gateway's stream; and the reference: one sentence rendered by a Kokoro host of this process,
// at the same niceness, before and after the service runs (the same starvation hits both).
//   npx tsx bench/live-first-sound.ts
//   BENCH_LIVE_CHARS (default 4800: about five minutes of speech), BENCH_LIVE_RUNS (default 3 articles
//   per engine, one after another on one running service, each once the one before is ready),
//   BENCH_LIVE_ENGINES (default "espeak;kokoro,pico,espeak")
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { Writable } from "node:stream";
import { freePort } from "../lib/net/free-port.js";
import { mp3Duration } from "../services/audio/mp3/index.js";
import { createKokoroEngine } from "../services/audio/engine/kokoro/index.js";
import { EMBEDDED_TOKEN, startEmbeddedProcess } from "../test/support/embedded-process.js";
import { descendantsOf } from "../test/support/processes.js";
import { quantile } from "./quantile.js";

const ADMIN_TOKEN = "live-first-sound-admin-0123456789";
const CHARS = Number(process.env.BENCH_LIVE_CHARS ?? 4_800);
const RUNS = Math.max(1, Number(process.env.BENCH_LIVE_RUNS ?? 3));
/** How long a run waits for its full file before it gives up on it (NaN in the figures). */
const FULL_WAIT_MS = Number(process.env.BENCH_LIVE_FULL_WAIT_MS ?? 20 * 60_000);
const REFERENCE_SENTENCE = "The harbour authority said on Monday that the new ferry timetable would start in the spring, a month later than planned.";

const PLACES = "harbour,council,river,library,station,garden,market,school,museum,bridge,archive,theatre,forest,quay,tower".split(",");
const DAYS = "Monday,Tuesday,Wednesday,Thursday,Friday,Saturday,Sunday".split(",");
/** Text nobody rendered before (no chunk from the cache): every sentence differs, in paragraphs of four. */
export function freshArticle(n: number, chars: number): string {
  const out: string[] = [];
  let len = 0;
  for (let i = 0; len < chars; i++) {
    const p = (k: number) => PLACES[(n * 5 + i * 7 + k) % PLACES.length];
    const day = DAYS[(n + i) % DAYS.length];
    const templates = [
      `The ${p(0)} committee said on ${day} that work near the ${p(1)} would start in the spring, a month later than planned.`,
      `Repairs to the ${p(2)}, damaged twice by winter storms, have taken longer than the engineers of the ${p(3)} expected.`,
      `People who work by the ${p(4)} said the delays had cost them most of the summer season.`,
      `The mayor asked the region for a grant for the ${p(0)} and the ${p(5)}, and promised an answer by ${day}.`,
    ];
    const s = templates[i % templates.length];
    out.push(s);
    len += s.length + 1;
    if (i % 4 === 3) out.push("\n\n");
  }
  return out.join(" ").replace(/ \n\n /g, "\n\n").trim();
}

function pssOfTree(pid: number): number {
  let kb = 0;
  for (const p of [pid, ...descendantsOf(pid).map((d) => d.pid)]) {
    try {
      kb += Number(/^Pss:\s+(\d+)/m.exec(readFileSync(`/proc/${p}/smaps_rollup`, "utf8"))?.[1] ?? 0);
    } catch {
      // gone meanwhile
    }
  }
  return kb / 1024;
}

/** Where one run's first sound went (seconds from the lookup, unless named). */
export interface Breakdown {
  /** The lookup's answer arrived; the render's job was asked for; it was claimed by the audio worker. */
  lookupS: number;
  requestedS: number;
  claimedS: number;
  /** The first chunk (the title): in the Kokoro host, queued behind other texts, waiting for eSpeak's phonemes, the model's calls (wall; CPU of the host), encoding. */
  firstChunk?: { sentS: number; queuedS: number; phonemesS: number; inferS: number; inferCpuS: number; encodeS: number; audioS: number };
  /** The first live part stored (after the chunk came back and its frames were joined). */
  firstPartS: number;
  /** The model's calls up to the preview: wall and CPU of the host, and the audio they made. */
  toPreview?: { inferS: number; inferCpuS: number; audioS: number; chunks: number };
}

export interface Run {
  /** From the lookup. */
  firstBytesS: number;
  previewS: number;
  previewAudioS: number;
  fullS: number;
  fullAudioS: number;
  /** Audio received in the stream and when it ended. */
  streamedAudioS: number;
  streamEndS: number;
  /** A listener who started at the first bytes: times the audio ran out, and for how long in all. */
  stalls: number;
  stalledS: number;
  breakdown: Breakdown;
}

export interface FirstSound {
  engines: string;
  runs: Run[];
  startS: number;
  /** The Kokoro host's start as its service logged it. */
  hostStart?: { loadS: number; warmupS: number; warmupCpuS: number };
  pssIdleMb: number;
  pssRenderingMb: number;
  load: [number, number];
}

interface LogLine {
  msg?: string;
  time?: string;
  articleId?: string;
  [k: string]: unknown;
}

/** One Kokoro-rendered sentence, warm, at the host's niceness: median wall seconds of three, and CPU. */
export async function referenceSentence(): Promise<{ wallS: number; cpuS: number; audioS: number } | undefined> {
  const lines: LogLine[] = [];
  const log = pino({ level: "debug" }, new Writable({ write: (c, _e, done) => (lines.push(JSON.parse(String(c)) as LogLine), done()) }));
  let engine;
  try {
    engine = await createKokoroEngine({ log });
  } catch {
    return undefined;
  }
  try {
    const runs: Array<{ wallS: number; cpuS: number; audioS: number }> = [];
    for (let i = 0; i < 3; i++) {
      const t = performance.now();
      await engine.synthesize({ text: REFERENCE_SENTENCE, voice: "alloy", lang: "en-US" });
      const r = lines.filter((l) => l.msg === "Kokoro chunk rendered").at(-1) as { inferCpuMs: number; audioS: number };
      runs.push({ wallS: (performance.now() - t) / 1000, cpuS: r.inferCpuMs / 1000, audioS: r.audioS });
    }
    runs.sort((a, b) => a.wallS - b.wallS);
    return runs[1];
  } finally {
    await engine.close();
  }
}

export async function firstSound(engines: string, runs = RUNS): Promise<FirstSound> {
  const load0 = os.loadavg()[0];
  const dir = mkdtempSync(join(os.tmpdir(), "live-first-sound-"));
  const authPort = await freePort("127.0.0.1");
  const logs: LogLine[] = [];
  const started = performance.now();
  const sys = await startEmbeddedProcess(dir, { LOCAL_ENGINES: engines, AUTH_PORT: String(authPort), ADMIN_TOKEN, LOG_LEVEL: "debug" }, [], {
    onLogLine: (line) => {
      if (!line.startsWith("{")) return;
      try {
        const l = JSON.parse(line) as LogLine;
        // Only what the breakdown reads: a debug log of a whole render is large.
        if (l.msg && /Kokoro|audio|live/.test(l.msg)) logs.push(l);
      } catch {
        // not a log line
      }
    },
  });
  const startS = (performance.now() - started) / 1000;
  const host = logs.find((l) => l.msg?.startsWith("Kokoro speech host started")) as { loadMs: number; warmupMs: number; warmupCpuMs: number } | undefined;
  try {
    execFileSync(process.execPath, ["--import", "tsx", "services/auth/cli.ts", "settings:set", "measured", "audio=onDemand"], {
      env: { ...process.env, AUTH_URL: `http://127.0.0.1:${authPort}`, ADMIN_TOKEN },
      stdio: "ignore",
    });
    const auth = { authorization: `Bearer ${EMBEDDED_TOKEN}` };
    const key = ((await (await fetch(`${sys.url}/api/player`, { headers: auth })).json()) as { publicKey: string }).publicKey;
    await new Promise((r) => setTimeout(r, 2_000));
    const pssIdleMb = pssOfTree(sys.child.pid!);
    let pssRenderingMb = 0;
    const out: Run[] = [];
    for (let n = 0; n < runs; n++) {
      const created = await fetch(`${sys.url}/api/articles`, {
        method: "POST",
        headers: { ...auth, "content-type": "application/json" },
        body: JSON.stringify({ title: `Works on the quay, part ${n + 1}`, text: freshArticle(n, CHARS), voice: "alloy", lang: "en-US" }),
      });
      const id = ((await created.json()) as { id: string }).id;
      const r = await oneListener(sys.url, key, id, logs, () => (pssRenderingMb = Math.max(pssRenderingMb, pssOfTree(sys.child.pid!))));
      out.push(r);
    }
    return {
      engines,
      runs: out,
      startS,
      hostStart: host && { loadS: host.loadMs / 1000, warmupS: host.warmupMs / 1000, warmupCpuS: host.warmupCpuMs / 1000 },
      pssIdleMb,
      pssRenderingMb,
      load: [load0, os.loadavg()[0]],
    };
  } finally {
    await sys.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** One listener pressing play on article `id`, from its lookup until its full file is there. */
async function oneListener(base: string, key: string, id: string, logs: LogLine[], sampleMemory: () => void): Promise<Run> {
  const lookupUrl = `${base}/player/v1/article?key=${key}&id=${id}`;
  const wall0 = Date.now();
  const t0 = performance.now();
  const since = () => (performance.now() - t0) / 1000;
  const first = ((await (await fetch(lookupUrl)).json()) as { article: { audio_live?: string } }).article;
  const lookupS = since();
  if (!first.audio_live) throw new Error("the lookup named no live stream");
  let previewS = NaN;
  let previewAudioS = NaN;
  let fullS = NaN;
  let fullAudioS = NaN;
  // As the player does: look again until the preview, then the full file, is there; memory meanwhile.
  const polling = (async () => {
    while (Number.isNaN(fullS) && since() * 1000 < FULL_WAIT_MS) {
      sampleMemory();
      const a = ((await (await fetch(lookupUrl)).json()) as { article: { audio_preview?: string; audio_preview_duration?: number; audio?: string; audio_duration?: number } }).article;
      if (a.audio_preview && Number.isNaN(previewS)) {
        previewS = since();
        previewAudioS = a.audio_preview_duration ?? NaN;
      }
      if (a.audio) {
        fullS = since();
        fullAudioS = a.audio_duration ?? NaN;
      }
      await new Promise((r) => setTimeout(r, 250));
    }
  })();
  const res = await fetch(first.audio_live);
  if (res.status !== 200) throw new Error(`live stream: ${res.status}`);
  const reader = res.body!.getReader();
  let bytes = Buffer.alloc(0);
  let firstBytesS = NaN;
  let stalls = 0;
  let stalledS = 0;
  for (let r = await reader.read(); !r.done; r = await reader.read()) {
    const at = since();
    if (Number.isNaN(firstBytesS)) firstBytesS = at;
    // Where a listener who started at the first bytes would be now, had the audio never run out.
    const had = bytes.length ? mp3Duration(bytes) : 0;
    const wanted = at - firstBytesS - stalledS;
    if (bytes.length && wanted > had) {
      stalls++;
      stalledS += wanted - had;
    }
    bytes = Buffer.concat([bytes, Buffer.from(r.value)]);
  }
  const streamEndS = since();
  await polling;
  return { firstBytesS, previewS, previewAudioS, fullS, fullAudioS, streamedAudioS: mp3Duration(bytes), streamEndS, stalls, stalledS, breakdown: breakdownOf(logs, id, wall0, lookupS) };
}

/** The run's log lines (its article's, and the Kokoro host's between its job's claim and its preview) as seconds from the lookup. */
function breakdownOf(logs: LogLine[], id: string, wall0: number, lookupS: number): Breakdown {
  const at = (l: LogLine | undefined) => (l?.time ? (Date.parse(l.time) - wall0) / 1000 : NaN);
  const mine = logs.filter((l) => l.articleId === id);
  const requested = mine.find((l) => l.msg === "audio requested on demand");
  const claimed = mine.find((l) => l.msg === "audio job claimed");
  const firstPart = mine.find((l) => l.msg === "first live audio part stored");
  const preview = mine.find((l) => l.msg === "audio preview ready");
  const claimedS = at(claimed);
  const previewAt = preview ? at(preview) : Infinity;
  // The host's lines carry no article: one listener at a time, so those after the claim are its chunks.
  const chunks = logs.filter((l) => l.msg === "Kokoro chunk rendered" && at(l) >= claimedS) as unknown as Array<LogLine & { queuedMs: number; phonemesMs: number; inferMs: number; inferCpuMs: number; encodeMs: number; totalMs: number; audioS: number }>;
  const c = chunks[0];
  const upTo = chunks.filter((l) => at(l) <= previewAt + 0.01);
  return {
    lookupS,
    requestedS: at(requested),
    claimedS,
    firstChunk: c && { sentS: at(c) - c.totalMs / 1000, queuedS: c.queuedMs / 1000, phonemesS: c.phonemesMs / 1000, inferS: c.inferMs / 1000, inferCpuS: c.inferCpuMs / 1000, encodeS: c.encodeMs / 1000, audioS: c.audioS },
    firstPartS: at(firstPart),
    toPreview: upTo.length ? { inferS: upTo.reduce((s, l) => s + l.inferMs, 0) / 1000, inferCpuS: upTo.reduce((s, l) => s + l.inferCpuMs, 0) / 1000, audioS: upTo.reduce((s, l) => s + l.audioS, 0), chunks: upTo.length } : undefined,
  };
}

const f1 = (x: number) => (Number.isFinite(x) ? x.toFixed(1) : "–");
const f2 = (x: number) => (Number.isFinite(x) ? x.toFixed(2) : "–");
const p50max = (xs: number[]) => `p50 ${f2(quantile(xs, 0.5))} s / max ${f2(Math.max(...xs))} s`;

export function formatFirstSound(rows: FirstSound[], reference?: { wallS: number; cpuS: number; audioS: number }): string {
  const lines = [`Audio on demand on the embedded default, from the player lookup (targets on 2 idle cores: first sound ≤ 3 s, preview ≤ 15 s, full ≤ 150 s for 5 min), ${RUNS} article(s) of ${CHARS} characters each:`];
  if (reference) lines.push(`  reference, same run: one sentence (${f1(reference.audioS)} s of speech) in a Kokoro host at the same niceness: ${f2(reference.wallS)} s wall, ${f2(reference.cpuS)} CPU-s`);
  for (const r of rows) {
    const runs = r.runs;
    const col = (f: (x: Run) => number) => runs.map(f);
    lines.push(`  ${r.engines}: started in ${f1(r.startS)} s${r.hostStart ? ` (Kokoro host: model ${f1(r.hostStart.loadS)} s, first call ${f2(r.hostStart.warmupS)} s / ${f2(r.hostStart.warmupCpuS)} CPU-s)` : ""}; load average ${f2(r.load[0])} -> ${f2(r.load[1])}`);
    lines.push(`    first sound (first bytes of the live stream)  ${p50max(col((x) => x.firstBytesS))}${reference && r.engines.includes("kokoro") ? `   = ${f1(quantile(col((x) => x.firstBytesS), 0.5) / reference.wallS)}x the reference sentence (p50)` : ""}`);
    lines.push(`    preview file (${f1(quantile(col((x) => x.previewAudioS), 0.5))} s of audio)     ${p50max(col((x) => x.previewS))}`);
    lines.push(`    full file (${f1(quantile(col((x) => x.fullAudioS), 0.5))} s of audio)       ${p50max(col((x) => x.fullS))}`);
    lines.push(`    stream: ${runs.map((x) => `${f1(x.streamedAudioS)} s ended at ${f1(x.streamEndS)} s, ${x.stalls} stall(s) ${f1(x.stalledS)} s`).join("; ")}`);
    lines.push(`    PSS of the service and its hosts: ${r.pssIdleMb.toFixed(0)} MB idle, ${r.pssRenderingMb.toFixed(0)} MB rendering (cap 900)`);
    for (const [i, x] of runs.entries()) {
      const b = x.breakdown;
      const c = b.firstChunk;
      const parts = [
        `lookup answered ${f2(b.lookupS)}`,
        `job asked ${f2(b.requestedS)}`,
        `claimed ${f2(b.claimedS)}`,
        c && `title chunk (${f1(c.audioS)} s of speech) in the host at ${f2(c.sentS)}: queued ${f2(c.queuedS)}, phonemes ${f2(c.phonemesS)}, model ${f2(c.inferS)} (${f2(c.inferCpuS)} CPU-s), encode ${f2(c.encodeS)}`,
        `live part stored ${f2(b.firstPartS)}`,
        `first bytes ${f2(x.firstBytesS)}`,
        b.toPreview && `preview after ${b.toPreview.chunks} chunks, ${f1(b.toPreview.audioS)} s of speech: model ${f1(b.toPreview.inferS)} s wall (${f1(b.toPreview.inferCpuS)} CPU-s, ${f2(b.toPreview.inferCpuS / b.toPreview.audioS)} CPU-s per audio-s)`,
      ].filter(Boolean);
      lines.push(`    run ${i + 1} (s from the lookup): ${parts.join("; ")}`);
    }
  }
  return lines.join("\n  ");
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const before = await referenceSentence();
  const rows: FirstSound[] = [];
  for (const engines of (process.env.BENCH_LIVE_ENGINES ?? "espeak;kokoro,pico,espeak").split(";")) {
    rows.push(await firstSound(engines));
    // Printed as they come: a run on a loaded machine takes minutes.
    console.log(`  ${formatFirstSound([rows.at(-1)!])}`);
  }
  const after = await referenceSentence();
  const reference = before && after ? { wallS: (before.wallS + after.wallS) / 2, cpuS: (before.cpuS + after.cpuS) / 2, audioS: before.audioS } : (before ?? after);
  console.log(`\n  ${formatFirstSound(rows, reference)}`);
}
