// Issue 34, point 6, for German: a text written for this test (numbers, abbreviations, names and
// one sentence of over 400 characters), prepared as the pipeline prepares it and read by Pico
// sentence by sentence. Measured with ffmpeg's silencedetect, independent of our own decoder:
// every sentence lasts about as long as its length says (nothing skipped, nothing repeated or
// looping), no sentence pauses for more than 1.5 s inside, and no chunk is clipped.
import { expect } from "chai";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { createPicoEngine } from "../../services/audio/engine/pico/index.js";
import type { SpeechEngine } from "../../services/audio/engine/types.js";
import { prepareSentences } from "../../services/audio/text/index.js";
import { decode } from "./measure.js";
import { picoFilesOrSkip } from "./pico-support.js";

const LONG =
  "Nachdem der Ausschuss für Verkehr, Bau und Stadtentwicklung am Mittwochnachmittag nach fast sechs Stunden Beratung, " +
  "zahlreichen Änderungsanträgen der Fraktionen und einer hitzigen Diskussion über die Kosten der geplanten Straßenbahnlinie " +
  "zwischen dem Hauptbahnhof, dem neuen Wohngebiet am Flussufer und dem Gewerbepark im Norden der Stadt endlich abgestimmt hatte, " +
  "erklärte die Vorsitzende, dass die Bauarbeiten nun frühestens im Herbst des übernächsten Jahres beginnen könnten.";

const TEXT = [
  "Die Stadtwerke Heidelberg haben am 14. März 2025 ihre Bilanz vorgelegt.",
  "Der Umsatz stieg um 3,8 % auf 412 Mio. Euro, der Gewinn lag bei rund 17,5 Millionen.",
  "Geschäftsführerin Dr. Annegret Vollmer sprach von einem z. B. durch höhere Energiepreise geprägten Jahr.",
  "Die Kunden in der Bergheimer Str. 27 bis 31 sollen bis Ende 2026 an das Fernwärmenetz angeschlossen werden.",
  LONG,
  "Ab 7:30 Uhr fahren die Busse der Linie 33 wieder im 10-Minuten-Takt.",
  "Herr Müller-Lüdenscheidt vom BUND begrüßte die Pläne ausdrücklich.",
].join(" ");

interface Silence {
  start: number;
  end: number;
}

/** `ffmpeg -af silencedetect`: the silences of at least `minSeconds` under -45 dBFS, and the file's duration. */
function silencedetect(mp3: Buffer, minSeconds: number): { silences: Silence[]; duration: number } {
  const dir = mkdtempSync(path.join(os.tmpdir(), "silencedetect-"));
  try {
    const file = path.join(dir, "f.mp3");
    writeFileSync(file, mp3);
    const r = spawnSync("ffmpeg", ["-nostats", "-hide_banner", "-i", file, "-af", `silencedetect=noise=-45dB:d=${minSeconds}`, "-f", "null", "-"], { encoding: "utf8" });
    if (r.status !== 0) throw new Error(`ffmpeg failed: ${r.stderr.slice(-300)}`);
    const starts = [...r.stderr.matchAll(/silence_start: (-?[\d.]+)/g)].map((m) => Number(m[1]));
    const ends = [...r.stderr.matchAll(/silence_end: ([\d.]+)/g)].map((m) => Number(m[1]));
    const time = /time=(\d+):(\d+):([\d.]+)/.exec(r.stderr.slice(r.stderr.lastIndexOf("time=")));
    const duration = time ? Number(time[1]) * 3600 + Number(time[2]) * 60 + Number(time[3]) : NaN;
    return { silences: starts.map((start, i) => ({ start: Math.max(0, start), end: ends[i] ?? duration })), duration };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Seconds from the first sound to the last, by silencedetect (the edges' silences left out). */
function spoken(mp3: Buffer): { seconds: number; inner: Silence[] } {
  const { silences, duration } = silencedetect(mp3, 0.1);
  let from = 0;
  let to = duration;
  const inner = silences.filter((s) => {
    if (s.start <= 0.01) {
      from = s.end;
      return false;
    }
    if (s.end >= duration - 0.01) {
      to = s.start;
      return false;
    }
    return true;
  });
  return { seconds: to - from, inner };
}

describe("German read by Pico: quality by an independent measure (issue 34, point 6)", function () {
  this.timeout(300_000);
  let engine: SpeechEngine;
  let sentences: string[];

  before(async function () {
    picoFilesOrSkip(this);
    engine = await createPicoEngine();
    sentences = prepareSentences({ title: "Stadtwerke legen Bilanz vor", text: TEXT, lang: "de-DE" }).flatMap((p) => p.spoken);
  });
  after(async () => engine?.close());

  it("the test text has what it must exercise", () => {
    expect(LONG.length).to.be.above(400);
    expect(sentences.some((s) => s.length > 400), "the long sentence stays one sentence").to.equal(true);
    // Abbreviations and numbers were read out by our normalisation, as in production.
    expect(sentences.join(" ")).to.not.match(/\d|Mio\.|Dr\./);
  });

  for (const voice of ["de-DE-KatjaNeural", "de-DE-ConradNeural"]) {
    it(`${voice}: every sentence at a plausible pace, no long pause inside, nothing clipped`, async () => {
      const rows: Array<{ text: string; seconds: number; rate: number; pauses: Silence[]; clipped: number }> = [];
      for (const text of sentences) {
        const mp3 = await engine.synthesize({ text, voice, lang: "de-DE" });
        const { seconds, inner } = spoken(mp3);
        const { samples } = await decode(mp3);
        const clipped = samples.filter((v) => Math.abs(v) >= 0.99).length;
        rows.push({ text, seconds, rate: text.length / seconds, pauses: inner, clipped });
      }
      const rates = rows.map((r) => r.rate).sort((a, b) => a - b);
      const median = rates[rates.length >> 1];
      for (const r of rows) {
        const what = `"${r.text.slice(0, 60)}…" (${r.text.length} characters in ${r.seconds.toFixed(2)} s, ${r.rate.toFixed(1)} chars/s, median ${median.toFixed(1)})`;
        // Under 30 % of the median rate: something was repeated or looped; over 300 %: skipped.
        expect(r.rate, what).to.be.within(0.3 * median, 3 * median);
        const longest = Math.max(0, ...r.pauses.map((p) => p.end - p.start));
        expect(longest, `longest pause inside ${what}`).to.be.at.most(1.5);
        expect(r.clipped, `samples at full scale in ${what}`).to.equal(0);
      }
    });
  }

  it("the whole text in one chunk has no pause over 1.5 s and lasts as long as its sentences", async () => {
    const mp3 = await engine.synthesize({ text: sentences.join(" "), voice: "de-DE-KatjaNeural", lang: "de-DE" });
    const { seconds, inner } = spoken(mp3);
    expect(Math.max(0, ...inner.map((p) => p.end - p.start))).to.be.at.most(1.5);
    const chars = sentences.join(" ").length;
    // Pico reads German at 12-16 characters a second; far outside that, text was lost or repeated.
    expect(chars / seconds).to.be.within(8, 25);
  });
});
