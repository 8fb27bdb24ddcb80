// lib/transcripts.ts: timed segments → WebVTT, SRT and JSON chapters, each
// read back by a strict reader (test/support/captions.ts).
import { expect } from "chai";
import type { TimedSegment } from "../../lib/segments.js";
import { toChapters, toSrt, toWebVtt } from "../../lib/transcripts.js";
import { parseSrtStrict, parseWebVttStrict } from "../support/captions.js";

const seg = (kind: TimedSegment["kind"], sentences: Array<[string, number, number]>, heading?: 2 | 3): TimedSegment => ({
  kind,
  text: sentences.map(([t]) => t).join(" "),
  start: sentences[0][1],
  end: sentences.at(-1)![2],
  sentences: sentences.map(([text, start, end]) => ({ text, start, end })),
  ...(heading ? { heading } : {}),
});

const article: TimedSegment[] = [
  seg("title", [["Rain & <sun> in Berlin", 0.31, 2.104]]),
  seg("paragraph", [
    ["It rained.", 2.9, 4.2],
    ["Then the sun came --> out.", 4.45, 7.0005],
  ]),
  seg("paragraph", [["What comes next", 7.6, 8.9]], 2),
  seg("paragraph", [["Tomorrow\n\nwill tell.", 9.3, 3725.25]]),
];

describe("transcripts", () => {
  describe("WebVTT", () => {
    it("is valid WebVTT with one cue per sentence, times to the millisecond", () => {
      const vtt = toWebVtt(article);
      expect(vtt.startsWith("WEBVTT\n\n")).to.equal(true);
      const cues = parseWebVttStrict(vtt);
      expect(cues.map((c) => [c.start, c.end])).to.deep.equal([
        [0.31, 2.104],
        [2.9, 4.2],
        [4.45, 7.001],
        [7.6, 8.9],
        [9.3, 3725.25],
      ]);
      expect(vtt).to.include("01:02:05.250");
    });

    it("escapes &, < and > and keeps each cue on one line, so the text reads back as written", () => {
      const vtt = toWebVtt(article);
      expect(vtt).to.include("Rain &amp; &lt;sun&gt; in Berlin");
      expect(vtt).to.include("came --&gt; out.");
      const texts = parseWebVttStrict(vtt).map((c) => c.text);
      expect(texts).to.deep.equal(["Rain & <sun> in Berlin", "It rained.", "Then the sun came --> out.", "What comes next", "Tomorrow will tell."]);
    });

    it("gives a sentence without duration one millisecond and puts sentences in time order", () => {
      const odd: TimedSegment[] = [seg("paragraph", [["Later.", 5, 6]]), seg("paragraph", [["Instant.", 2, 2], ["Backwards.", 3, 2.5]])];
      const cues = parseWebVttStrict(toWebVtt(odd));
      expect(cues.map((c) => [c.text, c.start, c.end])).to.deep.equal([
        ["Instant.", 2, 2.001],
        ["Backwards.", 3, 3.001],
        ["Later.", 5, 6],
      ]);
    });

    it("leaves out sentences without text or times, and drops control characters", () => {
      const odd: TimedSegment[] = [seg("paragraph", [["  ", 1, 2], ["Bell\u0007 rings.", 2, 3], ["Never.", Number.NaN, 4]])];
      expect(parseWebVttStrict(toWebVtt(odd)).map((c) => c.text)).to.deep.equal(["Bell rings."]);
    });

    it("is a bare header for no segments", () => {
      expect(toWebVtt([])).to.equal("WEBVTT\n");
      expect(parseWebVttStrict(toWebVtt([]))).to.deep.equal([]);
    });
  });

  describe("the strict WebVTT reader", () => {
    const bad: Array<[string, string]> = [
      ["no signature", "WEBVT\n\n00:00.000 --> 00:01.000\nx\n"],
      ["a one-digit hour", "WEBVTT\n\n0:00:00.000 --> 00:00:01.000\nx\n"],
      ["seconds past 59", "WEBVTT\n\n00:00:60.000 --> 00:01:01.000\nx\n"],
      ["a comma before the milliseconds", "WEBVTT\n\n00:00:00,000 --> 00:00:01,000\nx\n"],
      ["an end before the start", "WEBVTT\n\n00:00:02.000 --> 00:00:01.000\nx\n"],
      ["a start that goes back", "WEBVTT\n\n00:00:02.000 --> 00:00:03.000\nx\n\n00:00:01.000 --> 00:00:04.000\ny\n"],
      ["an unescaped &", "WEBVTT\n\n00:00:00.000 --> 00:00:01.000\nTom & Jerry\n"],
      ["a raw <", "WEBVTT\n\n00:00:00.000 --> 00:00:01.000\na < b\n"],
      ["a header without its blank line", "WEBVTT\n00:00:00.000 --> 00:00:01.000\nx\n"],
      ["a cue without text", "WEBVTT\n\n00:00:00.000 --> 00:00:01.000\n"],
    ];
    for (const [what, text] of bad) it(`refuses ${what}`, () => expect(() => parseWebVttStrict(text)).to.throw());

    it("reads identifiers, CRLF and references", () => {
      expect(parseWebVttStrict("WEBVTT - a title\r\n\r\nintro\r\n01:02.500 --> 01:03.000\r\nA &amp; B &#38; C\r\n")).to.deep.equal([{ id: "intro", start: 62.5, end: 63, text: "A & B & C" }]);
    });
  });

  describe("SRT", () => {
    it("numbers the same cues from 1 with comma timestamps and a blank line between them", () => {
      const srt = toSrt(article);
      expect(srt.startsWith("1\n00:00:00,310 --> 00:00:02,104\nRain & \uFF1Csun\uFF1E in Berlin\n\n2\n00:00:02,900 --> 00:00:04,200\nIt rained.\n\n")).to.equal(true);
      const cues = parseSrtStrict(srt);
      expect(cues).to.have.length(5);
      // SRT cannot escape: "<" and ">" are written as their fullwidth look-alikes (docs/transcripts.md).
      const lookalike = (t: string) => t.replace(/</g, "\uFF1C").replace(/>/g, "\uFF1E");
      expect(cues.map((c) => c.text)).to.deep.equal(parseWebVttStrict(toWebVtt(article)).map((c) => lookalike(c.text)));
      expect(cues.map((c) => [c.start, c.end])).to.deep.equal(parseWebVttStrict(toWebVtt(article)).map((c) => [c.start, c.end]));
    });

    it("is empty for no segments", () => {
      expect(toSrt([])).to.equal("");
    });

    for (const [what, text] of [
      ["a number out of order", "2\n00:00:00,000 --> 00:00:01,000\nx\n"],
      ["a dot before the milliseconds", "1\n00:00:00.000 --> 00:00:01.000\nx\n"],
      ["two blank lines", "1\n00:00:00,000 --> 00:00:01,000\nx\n\n\n2\n00:00:01,000 --> 00:00:02,000\ny\n"],
      ["a timing line as text", "1\n00:00:00,000 --> 00:00:01,000\n00:00:05,000 --> 00:00:06,000\n"],
      ["a tag", "1\n00:00:00,000 --> 00:00:01,000\n<b>x</b>\n"],
      ["an ASS override", "1\n00:00:00,000 --> 00:00:01,000\n{\\an8}x\n"],
      ["a character reference", "1\n00:00:00,000 --> 00:00:01,000\nA &amp; B\n"],
    ]) {
      it(`the strict reader refuses ${what}`, () => expect(() => parseSrtStrict(text)).to.throw());
    }
  });

  describe("chapters", () => {
    it("are the title at 0 and one per heading at its start, in the Podcasting 2.0 JSON shape", () => {
      const withH3 = [...article, seg("paragraph", [["A smaller heading", 3725.5, 3726.123]], 3)];
      expect(toChapters(withH3)).to.deep.equal({
        version: "1.2.0",
        chapters: [
          { startTime: 0, title: "Rain & <sun> in Berlin" },
          { startTime: 7.6, title: "What comes next" },
          { startTime: 3725.5, title: "A smaller heading" },
        ],
      });
    });

    it("are undefined without headings", () => {
      expect(toChapters(article.filter((s) => s.heading === undefined))).to.equal(undefined);
      expect(toChapters([])).to.equal(undefined);
    });
  });
});
