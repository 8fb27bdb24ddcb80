// Long articles must sound continuous: the decoded PCM around every chunk join is checked for
// clicks (a sample step larger than speech itself makes) and for gaps (silence longer than the
// pause the pipeline meant to put there, measured against the pauses eSpeak makes between
// sentences inside one chunk).
import { expect } from "chai";
import { MPEGDecoder } from "mpg123-decoder";
import { createLocalEngine, type SpeechEngine } from "../../services/audio/engine/index.js";
import { requireNativeEngine } from "../support/native-engine.js";
import { renderArticle, type Join, type RenderResult } from "../../services/audio/pipeline.js";

const ENGLISH = [
  "The city council approved the new budget on Tuesday after a debate that lasted well into the night.",
  "Dr. Alvarez, who chairs the finance committee, said the plan would cost about 3.5 million dollars over five years.",
  "Critics argued that the money should go to schools first, while supporters pointed to the state of the roads.",
  "The mayor is expected to sign it next week, and the first projects could start in the spring.",
  "Residents who spoke at the meeting asked for more bus routes and longer library hours.",
];
const GERMAN = [
  "Der Stadtrat hat am Dienstag nach einer langen Debatte den neuen Haushalt beschlossen.",
  "Die Vorsitzende des Finanzausschusses sagte, der Plan koste in fünf Jahren etwa 3,5 Millionen Euro.",
  "Kritiker wollten das Geld zuerst in Schulen stecken, Befürworter verwiesen auf den Zustand der Straßen.",
  "Der Bürgermeister will den Beschluss nächste Woche unterschreiben, die ersten Bauarbeiten beginnen im Frühjahr.",
  "Anwohner forderten in der Sitzung z. B. mehr Buslinien und längere Öffnungszeiten der Bibliothek.",
];

/** Paragraphs of four sentences each, several chunks per paragraph at the default chunk size. */
function article(sentences: string[], paragraphs: number): string {
  return Array.from({ length: paragraphs }, (_, p) => [0, 1, 2, 3].map((i) => sentences[(p + i) % sentences.length]).join(" ")).join("\n\n");
}

// ---- PCM analysis ----

/** Below this a sample counts as silent (about -50 dBFS). */
const SILENT = 0.003;
/** How far either side of a chunk edge a click is looked for. */
const CLICK_WINDOW_S = 0.025;
/** Interior gaps are looked for this far away from joins and from the ends of the audio. */
const JOIN_MARGIN_S = 0.35;
/** A silent run this long inside a chunk is a pause between sentences or clauses. */
const SENTENCE_GAP_S = 0.15;

function maxStep(x: Float32Array, from: number, to: number): number {
  let m = 0;
  for (let i = Math.max(1, from); i < Math.min(x.length, to); i++) m = Math.max(m, Math.abs(x[i] - x[i - 1]));
  return m;
}

/** Length (samples) of the silent run containing sample i; 0 when i is not silent. */
function silentRunAt(x: Float32Array, i: number): number {
  if (i < 0 || i >= x.length || Math.abs(x[i]) >= SILENT) return 0;
  let a = i;
  let b = i;
  while (a > 0 && Math.abs(x[a - 1]) < SILENT) a--;
  while (b < x.length && Math.abs(x[b]) < SILENT) b++;
  return b - a;
}

/** Silent runs (samples) of at least `min` samples that start outside the excluded ranges. */
function silentRuns(x: Float32Array, min: number, excluded: (i: number) => boolean): number[] {
  const runs: number[] = [];
  let start = -1;
  for (let i = 0; i <= x.length; i++) {
    if (i < x.length && Math.abs(x[i]) < SILENT) {
      if (start < 0) start = i;
    } else {
      if (start >= 0 && i - start >= min && !excluded(start) && !excluded(i - 1)) runs.push(i - start);
      start = -1;
    }
  }
  return runs;
}

/** p-quantile of the sample steps outside the excluded ranges: how sharp speech itself gets. */
function stepQuantile(x: Float32Array, p: number, excluded: (i: number) => boolean): number {
  const steps: number[] = [];
  for (let i = 1; i < x.length; i++) if (!excluded(i)) steps.push(Math.abs(x[i] - x[i - 1]));
  steps.sort((a, b) => a - b);
  return steps[Math.floor(steps.length * p)];
}

interface JoinReport {
  join: Join;
  step: number;
  gapS: number;
}

interface Continuity {
  sampleRate: number;
  clickThreshold: number;
  longestInteriorGapS: number;
  interiorGaps: number;
  joins: JoinReport[];
}

let decoder: MPEGDecoder | undefined;

async function decode(mp3: Buffer): Promise<{ pcm: Float32Array; sampleRate: number }> {
  decoder ??= new MPEGDecoder();
  await decoder.ready;
  await decoder.reset();
  const d = decoder.decode(mp3);
  expect(d.errors).to.have.length(0);
  return { pcm: d.channelData[0], sampleRate: d.sampleRate };
}

async function continuity(r: RenderResult): Promise<Continuity> {
  const { pcm, sampleRate } = await decode(r.full);
  // The decoder drops its own delay (529 samples) from the front: frame time t is sample t*rate - shift.
  const shift = Math.round(r.fullDuration * sampleRate) - pcm.length;
  expect(shift).to.be.within(0, 1152);
  const at = (seconds: number) => Math.round(seconds * sampleRate) - shift;
  const margin = JOIN_MARGIN_S * sampleRate;
  const nearJoinOrEnd = (i: number) =>
    i < margin || i > pcm.length - margin || r.joins.some((j) => i > at(j.seconds) - margin && i < at(j.seconds + j.pauseSeconds) + margin);

  const interior = silentRuns(pcm, SENTENCE_GAP_S * sampleRate, nearJoinOrEnd);
  const w = Math.round(CLICK_WINDOW_S * sampleRate);
  const joins = r.joins.map((join) => {
    const end = at(join.seconds);
    const start = at(join.seconds + join.pauseSeconds);
    const step = Math.max(maxStep(pcm, end - w, end + w), maxStep(pcm, start - w, start + w));
    return { join, step, gapS: silentRunAt(pcm, Math.round((end + start) / 2)) / sampleRate };
  });
  return {
    sampleRate,
    // 99% of speech's own sample steps stay under this.
    clickThreshold: stepQuantile(pcm, 0.99, nearJoinOrEnd),
    longestInteriorGapS: Math.max(0, ...interior) / sampleRate,
    interiorGaps: interior.length,
    joins,
  };
}

function expectContinuous(r: RenderResult, c: Continuity): void {
  if (process.env.JOINS_DEBUG) console.log(JSON.stringify({ ...c, joins: c.joins.map((j) => [j.join.seconds.toFixed(2), j.join.pauseSeconds.toFixed(3), j.step.toFixed(4), j.gapS.toFixed(3)].join(" ")) }, null, 1));
  const frameS = 576 / c.sampleRate;
  expect(r.joins.length, "joins").to.equal(r.chunks - 1);
  expect(r.joins.filter((j) => j.pauseSeconds === 0).length, "joins inside paragraphs").to.be.greaterThan(3);
  expect(c.interiorGaps, "sentence pauses inside chunks").to.be.greaterThan(3);
  expect(c.clickThreshold).to.be.greaterThan(0.02);
  for (const { join, step, gapS } of c.joins) {
    const where = `join at ${join.seconds.toFixed(2)} s (pause ${join.pauseSeconds.toFixed(3)} s)`;
    expect(step, `${where}: click`).to.be.lessThan(c.clickThreshold);
    // No longer than the intended pause plus the longest pause eSpeak makes between two
    // sentences of one chunk (and a frame of rounding) ...
    expect(gapS, `${where}: gap`).to.be.at.most(join.pauseSeconds + c.longestInteriorGapS + frameS);
    // ... and sentences either side of a join do not run into each other.
    expect(gapS, `${where}: sentences run together`).to.be.at.least(join.pauseSeconds + 0.12);
  }
}

describe("chunk joins in the decoded audio", function () {
  this.timeout(180_000);

  describe("the analysis", () => {
    const rate = 22050;
    const speechLike = (seconds: number) => Float32Array.from({ length: seconds * rate }, (_, i) => 0.3 * Math.sin((2 * Math.PI * 180 * i) / rate) * Math.sin((Math.PI * i) / (seconds * rate)));

    it("sees a click where audio is cut off mid-sound", () => {
      const tone = speechLike(1);
      const cut = new Float32Array(2 * rate);
      cut.set(tone.subarray(0, rate / 2 + 37), 0); // stops mid-wave, no fade
      cut.set(tone.subarray(rate / 2), rate);
      expect(maxStep(cut, rate / 2, rate / 2 + 100)).to.be.greaterThan(0.05);
      expect(maxStep(tone, 0, tone.length)).to.be.lessThan(0.02);
    });

    it("measures the silent run across a join", () => {
      const x = new Float32Array(3 * rate).fill(0.2);
      x.fill(0, rate, rate + rate / 5);
      expect(silentRunAt(x, rate + 100)).to.equal(rate / 5);
      expect(silentRunAt(x, 10)).to.equal(0);
      expect(silentRuns(x, rate / 10, () => false)).to.deep.equal([rate / 5]);
      expect(silentRuns(x, rate / 10, (i) => i >= rate && i < 2 * rate)).to.deep.equal([]);
    });
  });

  const engines: Array<{ name: string; make: () => Promise<SpeechEngine | undefined> }> = [
    { name: "WASM engine", make: () => createLocalEngine({ native: "never" }) },
    { name: "native engine", make: async () => createLocalEngine({ native: "always" }) },
  ];

  for (const { name, make } of engines) {
    describe(`with the ${name}`, () => {
      let engine: SpeechEngine | undefined;
      before(async function () {
        if (name === "native engine") await requireNativeEngine(this);
        engine = await make();
      });
      after(async () => {
        await engine?.close();
      });

      it("an English long article has no clicks and no gaps at its joins", async () => {
        const r = await renderArticle({ title: "Council approves the budget", text: article(ENGLISH, 4), lang: "en-US", voice: "alloy" }, engine!);
        expect(r.chunks).to.be.greaterThan(8);
        expectContinuous(r, await continuity(r));
      });

      it("a German long article has no clicks and no gaps at its joins", async () => {
        const r = await renderArticle({ title: "Stadtrat beschließt den Haushalt", text: article(GERMAN, 4), lang: "de-DE", voice: "de-DE-KatjaNeural" }, engine!);
        expect(r.chunks).to.be.greaterThan(8);
        expectContinuous(r, await continuity(r));
      });
    });
  }

  after(() => decoder?.free());
});
