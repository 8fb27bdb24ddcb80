// Captions an article's own text cannot break (issue 33, point 5): sentences shaped like SRT
// timing lines, cue numbers, markup of every kind players read, character references and
// blank-line tricks go through WebVTT and SRT, and are read back twice, by ffmpeg (what mpv and
// many players use) and by the strict readers: every cue survives, with the text as written
// (SRT: with the look-alikes docs/transcripts.md names).
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import type { TimedSegment } from "../../lib/segments.js";
import { toSrt, toWebVtt } from "../../lib/transcripts.js";
import { createLocalEngine } from "../../services/audio/engine/index.js";
import { renderArticle } from "../../services/audio/pipeline.js";
import { parseSrtStrict, parseWebVttStrict } from "../support/captions.js";

const HOSTILE = [
  "00:00:01,000 --> 00:00:02,000",
  "7",
  "8\n00:00:09,000 --> 00:00:10,000",
  "00:00:03.000 --> 00:00:04.000 line:0",
  "Bold <b>claims</b> and <i>quiet</i> ones.",
  "A <script>alert(1)</script> in the text.",
  "{\\an8}Up at the top?",
  "Tom & Jerry &amp; friends &#65; &lt;b&gt; &nbsp;.",
  "One paragraph.\n\n\n9\n00:00:11,000 --> 00:00:12,000\nInjected cue.",
  "Arrows --> inside -> the text <-- too.",
  "A line with\r\n\r\nCRLF blank lines.",
  "Unicode\u2028line\u2029and paragraph\u0085separators.",
  "WEBVTT",
  "NOTE this is not a comment",
  "<c.yellow>styled</c> and <v Bob>voiced</v>.",
];

// What each sentence reads as in a cue: one line, whitespace collapsed.
const asLine = (s: string) => s.replace(/[\s\u0085]+/g, " ").trim();
// The SRT look-alikes (lib/transcripts.ts): markup characters, and "&" where it would start a reference.
const srtForm = (s: string) =>
  asLine(s)
    .replace(/</g, "\uFF1C")
    .replace(/>/g, "\uFF1E")
    .replace(/\{/g, "\uFF5B")
    .replace(/\}/g, "\uFF5D")
    .replace(/&(?=#?[0-9A-Za-z]+;)/g, "\uFF06");
const vttForm = (s: string) => asLine(s).replace(/\{/g, "\uFF5B").replace(/\}/g, "\uFF5D");

const segments: TimedSegment[] = HOSTILE.map((text, i) => ({
  kind: i === 0 ? "title" : "paragraph",
  text,
  start: i * 1.5,
  end: i * 1.5 + 1.25,
  sentences: [{ text, start: i * 1.5, end: i * 1.5 + 1.25 }],
}));

/** ffmpeg reads the file as captions and writes it again as `format`: what a player built on it sees. */
function ffmpegRead(file: string, format: "srt" | "webvtt"): string {
  const r = spawnSync("ffmpeg", ["-v", "error", "-i", file, "-f", format, "-"], { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`ffmpeg failed: ${r.stderr.slice(-300)}`);
  return r.stdout;
}

/** ffmpeg's SRT output, cue by cue. */
function ffmpegSrtCues(out: string): Array<{ start: string; text: string }> {
  return out
    .replace(/\r\n?/g, "\n")
    .trimEnd()
    .split(/\n\n+/)
    .filter((b) => b.trim() !== "")
    .map((block) => {
      const lines = block.split("\n");
      expect(lines[0]).to.match(/^\d+$/, block);
      expect(lines[1]).to.match(/^\d\d:\d\d:\d\d,\d{3} --> \d\d:\d\d:\d\d,\d{3}$/, block);
      return { start: lines[1].slice(0, 12), text: lines.slice(2).join("\n") };
    });
}

describe("captions from hostile text", () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), "captions-"));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("SRT: the strict reader finds every cue, one line each, with the text as written (look-alikes for markup)", () => {
    const cues = parseSrtStrict(toSrt(segments));
    expect(cues.map((c) => c.text)).to.deep.equal(HOSTILE.map(srtForm));
    expect(cues.map((c) => c.start)).to.deep.equal(HOSTILE.map((_, i) => i * 1.5));
  });

  it("WebVTT: the strict reader finds every cue with the text as written", () => {
    const cues = parseWebVttStrict(toWebVtt(segments));
    expect(cues.map((c) => c.text)).to.deep.equal(HOSTILE.map(vttForm));
  });

  it("SRT: ffmpeg reads every cue back, at its time, with no markup taken from the text", () => {
    const file = join(dir, "hostile.srt");
    writeFileSync(file, toSrt(segments));
    for (const format of ["srt", "webvtt"] as const) {
      const out = ffmpegRead(file, format);
      if (format === "srt") {
        const cues = ffmpegSrtCues(out);
        expect(cues.map((c) => c.text)).to.deep.equal(HOSTILE.map(srtForm));
        expect(cues.map((c) => c.start)).to.deep.equal(parseSrtStrict(toSrt(segments)).map((c) => srtTime(c.start)));
      } else {
        // ffmpeg's WebVTT writer escapes nothing itself; the cue count and texts must still be ours.
        const cues = parseLooseVtt(out);
        expect(cues).to.deep.equal(HOSTILE.map(srtForm));
      }
    }
  });

  it("WebVTT: ffmpeg reads every cue back with the text as written", () => {
    const file = join(dir, "hostile.vtt");
    writeFileSync(file, toWebVtt(segments));
    const cues = ffmpegSrtCues(ffmpegRead(file, "srt"));
    expect(cues.map((c) => c.text)).to.deep.equal(HOSTILE.map(vttForm));
  });

  it("the hostile text did break the captions as they were written before (the test can fail)", () => {
    // The old SRT form: text as it is. ffmpeg loses cues and tags on it, which is what the look-alikes prevent.
    const naive = segments
      .map((s, i) => `${i + 1}\n${srtTime(s.start)} --> ${srtTime(s.end)}\n${asLine(s.text)}\n`)
      .join("\n");
    const file = join(dir, "naive.srt");
    writeFileSync(file, naive);
    const texts = ffmpegSrtCues(ffmpegRead(file, "srt")).map((c) => c.text);
    expect(texts.length).to.be.below(HOSTILE.length);
    // and a tag it does not know is dropped as markup, where the reader should have seen the words.
    expect(texts.join("\n")).to.not.include("<script>");
  });
});

describe("captions of a rendered article with hostile text", function () {
  this.timeout(120_000);

  it("every sentence the audio service times is one cue in both files, read back whole by ffmpeg and the strict readers", async () => {
    const engine = await createLocalEngine({ threads: 2, native: "never" });
    const dir = mkdtempSync(join(tmpdir(), "captions-rendered-"));
    try {
      // As a publisher could send it: plain text whose sentences look like cues, tags and references.
      const text = [
        "1",
        "00:00:01,000 --> 00:00:02,000",
        "The next line is a cue number. 2",
        "00:00:03,000 --> 00:00:04,000 Then comes <b>bold</b> and <i>slanted</i> text.",
        "{\\an8}This wants to be at the top. A <script>alert(1)</script> follows & so does &amp;.",
      ].join("\n\n");
      const r = await renderArticle({ title: "Cues <i>inside</i> & out", text, lang: "en-US", voice: "alloy" }, engine);
      const sentences = r.segments.flatMap((s) => s.sentences.map((x) => x.text));
      expect(sentences.length).to.be.at.least(7);
      const srt = toSrt(r.segments);
      const vtt = toWebVtt(r.segments);
      expect(parseSrtStrict(srt).map((c) => c.text)).to.deep.equal(sentences.map(srtForm));
      expect(parseWebVttStrict(vtt).map((c) => c.text)).to.deep.equal(sentences.map(vttForm));
      writeFileSync(join(dir, "a.srt"), srt);
      writeFileSync(join(dir, "a.vtt"), vtt);
      expect(ffmpegSrtCues(ffmpegRead(join(dir, "a.srt"), "srt")).map((c) => c.text)).to.deep.equal(sentences.map(srtForm));
      expect(ffmpegSrtCues(ffmpegRead(join(dir, "a.vtt"), "srt")).map((c) => c.text)).to.deep.equal(sentences.map(vttForm));
    } finally {
      await engine.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

function srtTime(seconds: number): string {
  const ms = Math.round(seconds * 1000);
  const pad = (n: number, w = 2) => String(n).padStart(w, "0");
  return `${pad(Math.floor(ms / 3_600_000))}:${pad(Math.floor(ms / 60_000) % 60)}:${pad(Math.floor(ms / 1000) % 60)},${pad(ms % 1000, 3)}`;
}

/** ffmpeg's WebVTT output: the text lines of each cue block after the header. */
function parseLooseVtt(out: string): string[] {
  const [, ...blocks] = out.replace(/\r\n?/g, "\n").trimEnd().split(/\n\n+/).filter((b) => b.trim() !== "");
  return blocks.map((b) => {
    const lines = b.split("\n");
    expect(lines[0]).to.match(/-->/, b);
    return lines.slice(1).join("\n");
  });
}
