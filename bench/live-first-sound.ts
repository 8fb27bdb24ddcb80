// A listener's first sound on audio made on demand (issue 34: within 3 s of pressing play), on the
// embedded default (`npm start`'s process) with Kokoro, beside eSpeak in the same run: a parked
// article's player lookup (which asks for the render), then its live stream (audio_live) read as
// an <audio> element would, timed from the lookup. Also whether the stream stays ahead of playback
// (the stalls a listener who started at the first bytes would hear), when the preview file is there,
// and the memory (PSS) of the service with everything it started, idle and while rendering.
//   npx tsx bench/live-first-sound.ts   (BENCH_LIVE_CHARS, default 4000)
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { freePort } from "../lib/net/free-port.js";
import { mp3Duration } from "../services/audio/mp3/index.js";
import { EMBEDDED_TOKEN, startEmbeddedProcess } from "../test/support/embedded-process.js";
import { descendantsOf } from "../test/support/processes.js";

const ADMIN_TOKEN = "live-first-sound-admin-0123456789";
const CHARS = Number(process.env.BENCH_LIVE_CHARS ?? 4_000);
const SENTENCES = [
  "The harbour authority said on Monday that the new ferry timetable would start in the spring, a month later than planned.",
  "Repairs to the sea wall, damaged twice by winter storms, have taken longer than the engineers expected.",
  "Fishermen on the inner quay said the delays had cost them most of the summer season.",
  "The mayor asked the regional government for an emergency grant and promised a written answer within a month.",
];

function article(chars: number): string {
  const out: string[] = [];
  for (let i = 0, n = 0; n < chars; i++) {
    out.push(SENTENCES[i % SENTENCES.length]);
    n += SENTENCES[i % SENTENCES.length].length + 1;
    if (i % 4 === 3) out.push("\n\n");
  }
  return out.join(" ").replace(/ \n\n /g, "\n\n");
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

export interface FirstSound {
  engines: string;
  /** From the lookup that asked for the render. */
  firstBytesS: number;
  /** Audio received in the stream and when it ended. */
  streamedAudioS: number;
  streamEndS: number;
  /** A listener who started at the first bytes: times the audio ran out, and for how long in all. */
  stalls: number;
  stalledS: number;
  previewS: number;
  pssIdleMb: number;
  pssRenderingMb: number;
}

export async function firstSound(engines: string): Promise<FirstSound> {
  const dir = mkdtempSync(join(os.tmpdir(), "live-first-sound-"));
  const authPort = await freePort("127.0.0.1");
  const sys = await startEmbeddedProcess(dir, { LOCAL_ENGINES: engines, AUTH_PORT: String(authPort), ADMIN_TOKEN });
  try {
    execFileSync(process.execPath, ["--import", "tsx", "services/auth/cli.ts", "settings:set", "measured", "audio=onDemand"], {
      env: { ...process.env, AUTH_URL: `http://127.0.0.1:${authPort}`, ADMIN_TOKEN },
      stdio: "ignore",
    });
    const auth = { authorization: `Bearer ${EMBEDDED_TOKEN}` };
    const key = ((await (await fetch(`${sys.url}/api/player`, { headers: auth })).json()) as { publicKey: string }).publicKey;
    const created = await fetch(`${sys.url}/api/articles`, { method: "POST", headers: { ...auth, "content-type": "application/json" }, body: JSON.stringify({ title: "Ferry timetable delayed", text: article(CHARS), voice: "alloy", lang: "en-US" }) });
    const id = ((await created.json()) as { id: string }).id;
    await new Promise((r) => setTimeout(r, 2_000));
    const pssIdleMb = pssOfTree(sys.child.pid!);

    const lookupUrl = `${sys.url}/player/v1/article?key=${key}&id=${id}`;
    const t0 = performance.now();
    const first = ((await (await fetch(lookupUrl)).json()) as { article: { audio_live?: string } }).article;
    if (!first.audio_live) throw new Error("the lookup named no live stream");
    let previewS = NaN;
    let pssRenderingMb = 0;
    let streaming = true;
    // As the player does: look again until the preview file is there; sample memory meanwhile.
    const polling = (async () => {
      while (streaming) {
        pssRenderingMb = Math.max(pssRenderingMb, pssOfTree(sys.child.pid!));
        if (Number.isNaN(previewS)) {
          const a = ((await (await fetch(lookupUrl)).json()) as { article: { audio_preview?: string } }).article;
          if (a.audio_preview) previewS = (performance.now() - t0) / 1000;
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
      const at = (performance.now() - t0) / 1000;
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
    const streamEndS = (performance.now() - t0) / 1000;
    streaming = false;
    await polling;
    return { engines, firstBytesS, streamedAudioS: mp3Duration(bytes), streamEndS, stalls, stalledS, previewS, pssIdleMb, pssRenderingMb };
  } finally {
    await sys.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

export function formatFirstSound(rows: FirstSound[], load: [number, number]): string {
  return [
    `Audio on demand, first sound (embedded default; from the player lookup; target: within 3 s), an article of ${CHARS} characters:`,
    ...rows.map(
      (r) =>
        `    ${r.engines.padEnd(16)} first bytes after ${r.firstBytesS.toFixed(2)} s (speech 0.3 s into them), preview file after ${r.previewS.toFixed(1)} s; stream of ${r.streamedAudioS.toFixed(0)} s ended after ${r.streamEndS.toFixed(1)} s with ${r.stalls} stall(s), ${r.stalledS.toFixed(1)} s in all; PSS of the service and its hosts ${r.pssIdleMb.toFixed(0)} MB idle, ${r.pssRenderingMb.toFixed(0)} MB rendering`,
    ),
    `    load average ${load[0].toFixed(2)} -> ${load[1].toFixed(2)}`,
  ].join("\n  ");
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const load0 = os.loadavg()[0];
  const rows = [await firstSound("espeak"), await firstSound("kokoro,pico,espeak")];
  console.log(`  ${formatFirstSound(rows, [load0, os.loadavg()[0]])}`);
}
