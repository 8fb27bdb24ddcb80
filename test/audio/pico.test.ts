// The German engine (SVOX Pico): what a listener gets from it, and what an operator sees when its
// language files are missing. Skipped only on a developer's machine without the files; CI has them.
import { expect } from "chai";
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { createPicoEngine, PICO_FORMAT } from "../../services/audio/engine/pico/index.js";
import { SpeechInputError, type SpeechEngine } from "../../services/audio/engine/types.js";
import { mp3Duration, parseFrames } from "../../services/audio/mp3/index.js";
import { decode, expectOnTarget } from "./measure.js";
import { picoFilesOrSkip } from "./pico-support.js";

const DE =
  "Der Stadtrat hat am Dienstagabend über die neue Brücke beraten. Nach einer langen Debatte einigten sich die Mitglieder darauf, " +
  "im Frühjahr mit dem Bau zu beginnen und die alte Fähre bis zum Ende der Arbeiten weiter fahren zu lassen.";

/** Median fundamental frequency (Hz) of the voiced parts, by autocorrelation: enough to tell a lowered voice. */
function medianF0(samples: Float32Array, rate: number): number {
  const win = 1024;
  const found: number[] = [];
  for (let start = 0; start + win < samples.length; start += win) {
    const x = samples.subarray(start, start + win);
    let energy = 0;
    for (const v of x) energy += v * v;
    if (energy / win < 0.003) continue;
    let best = 0;
    let lag = 0;
    for (let l = Math.floor(rate / 400); l < rate / 60; l++) {
      let c = 0;
      for (let i = 0; i + l < win; i++) c += x[i] * x[i + l];
      if (c > best) [best, lag] = [c, l];
    }
    if (lag) found.push(rate / lag);
  }
  found.sort((a, b) => a - b);
  return found[found.length >> 1] ?? 0;
}

describe("Pico engine (German)", function () {
  this.timeout(120_000);
  let engine: SpeechEngine;

  before(async function () {
    picoFilesOrSkip(this);
    engine = await createPicoEngine();
  });
  after(async () => engine?.close());

  it("reads German as 16 kHz mono MP3 at the loudness target, with nothing clipped", async () => {
    const mp3 = await engine.synthesize({ text: DE, voice: "de-DE-KatjaNeural", lang: "de-DE" });
    expect(engine.format).to.deep.equal(PICO_FORMAT);
    const frames = parseFrames(mp3);
    expect(frames.every((f) => f.sampleRate === 16000 && f.channels === 1)).to.equal(true);
    // ~230 characters of German prose: about 13-20 s when read at a natural pace.
    expect(mp3Duration(mp3)).to.be.within(10, 24);
    expectOnTarget("Katja on Pico", mp3);
    const { samples } = await decode(mp3);
    expect(samples.filter((v) => Math.abs(v) >= 0.99).length, "samples at full scale").to.equal(0);
  });

  it("gives Conrad a male pitch, clearly lower than Katja's", async () => {
    const [katja, conrad] = await Promise.all(
      ["de-DE-KatjaNeural", "de-DE-ConradNeural"].map(async (voice) => decode(await engine.synthesize({ text: DE, voice, lang: "de-DE" }))),
    );
    const f0Katja = medianF0(katja.samples, katja.sampleRate);
    const f0Conrad = medianF0(conrad.samples, conrad.sampleRate);
    expect(f0Conrad, `Conrad ${f0Conrad} Hz against Katja ${f0Katja} Hz`).to.be.below(f0Katja * 0.85);
    expect(f0Conrad).to.be.below(160);
  });

  it("reads angle brackets in article text as text, not as Pico markup", async () => {
    // Markup that, were it obeyed, would make the rest five times slower and an octave lower.
    const text = "Der Wert <speed level='20'><pitch level='50'>ist kleiner als zehn.";
    const marked = await engine.synthesize({ text, voice: "de-DE-KatjaNeural", lang: "de-DE" });
    const asText = await engine.synthesize({ text: text.replace(/[<>]/g, " "), voice: "de-DE-KatjaNeural", lang: "de-DE" });
    expect(mp3Duration(marked)).to.be.closeTo(mp3Duration(asText), 0.1 * mp3Duration(asText));
    const [a, b] = await Promise.all([decode(marked), decode(asText)]);
    expect(medianF0(a.samples, a.sampleRate)).to.be.closeTo(medianF0(b.samples, b.sampleRate), 20);
  });

  it("refuses what it cannot read with a SpeechInputError, and stays usable", async () => {
    for (const req of [
      { text: "", voice: "de-DE-KatjaNeural", lang: "de-DE" as const },
      { text: "Hallo.", voice: "nobody", lang: "de-DE" as const },
      { text: "Hello.", voice: "de-DE-KatjaNeural", lang: "en-US" as const },
    ]) {
      const err = await engine.synthesize(req).then(() => undefined, (e: unknown) => e);
      expect(err, JSON.stringify(req)).to.be.instanceOf(SpeechInputError);
    }
    expect((await engine.synthesize({ text: "Noch da.", voice: "de-DE-KatjaNeural", lang: "de-DE" })).length).to.be.above(0);
  });

  it("answers an aborted request at once with the abort's reason", async () => {
    const controller = new AbortController();
    controller.abort(new Error("listener left"));
    const err = await engine.synthesize({ text: DE, voice: "de-DE-KatjaNeural", lang: "de-DE" }, controller.signal).then(() => undefined, (e: unknown) => e);
    expect((err as Error).message).to.equal("listener left");
  });

  it("makes silence of the length asked, in its own format", async () => {
    const pause = await engine.silence(720);
    expect(mp3Duration(pause)).to.be.closeTo(0.72, 0.04);
    expect(parseFrames(pause)[0].sampleRate).to.equal(16000);
  });
});

describe("Pico engine without its language files", function () {
  this.timeout(60_000);
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), "pico-files-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("rejects with an Error that names where it looked and how to get the files", async () => {
    const err = await createPicoEngine({ dirs: [dir] }).then(() => undefined, (e: unknown) => e);
    expect(err).to.be.instanceOf(Error);
    expect((err as Error).message).to.include(dir).and.to.include("PICO_DIR").and.to.include("install-pico");
  });

  it("refuses a language file that is not the pinned one", async function () {
    const real = picoFilesOrSkip(this);
    copyFileSync(path.join(real, "de-DE_ta.bin"), path.join(dir, "de-DE_ta.bin"));
    writeFileSync(path.join(dir, "de-DE_gl0_sg.bin"), Buffer.alloc(634996, 1));
    const err = await createPicoEngine({ dirs: [dir] }).then(() => undefined, (e: unknown) => e);
    expect((err as Error).message).to.include("not the pinned ones").and.to.include("de-DE_gl0_sg.bin");
  });
});
