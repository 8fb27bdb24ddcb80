// services/audio/transcript-files.ts: what the worker stores beside a revision's MP3s.
import { expect } from "chai";
import { audioKeys } from "../../lib/revision-files.js";
import type { TimedSegment } from "../../lib/segments.js";
import { storeTranscript } from "../../services/audio/transcript-files.js";
import { parseSrtStrict, parseWebVttStrict } from "../support/captions.js";
import { MemoryBlobs } from "../gateway/support.js";

const title: TimedSegment = { kind: "title", text: "A title", start: 0.25, end: 1, sentences: [{ text: "A title", start: 0.25, end: 1 }] };
const heading: TimedSegment = { kind: "paragraph", text: "Part two", start: 4, end: 4.8, heading: 2, sentences: [{ text: "Part two", start: 4, end: 4.8 }] };
const body: TimedSegment = { kind: "paragraph", text: "One. Two.", start: 1.5, end: 3.5, sentences: [{ text: "One.", start: 1.5, end: 2.2 }, { text: "Two.", start: 2.6, end: 3.5 }] };

describe("audio worker: the timed text beside the MP3s", () => {
  it("stores segments.json (the public form), WebVTT and SRT under the revision's keys, with their types", async () => {
    const blobs = new MemoryBlobs();
    const keys = audioKeys("art", 3n);
    const stored = await storeTranscript(blobs, keys, [title, body]);
    expect(stored.chapters).to.equal(false);
    expect([...blobs.files.keys()].sort()).to.deep.equal(["art/3/segments.json", "art/3/transcript.srt", "art/3/transcript.vtt"]);
    const f = (k: string) => blobs.files.get(k)!;
    expect(f(keys.segments).info.contentType).to.equal("application/json");
    expect(f(keys.vtt).info.contentType).to.equal("text/vtt; charset=utf-8");
    expect(f(keys.srt).info.contentType).to.equal("application/x-subrip; charset=utf-8");
    expect(JSON.parse(f(keys.segments).data.toString())).to.deep.equal({ result: "ok", segments: [title, body] });
    expect(parseWebVttStrict(f(keys.vtt).data.toString()).map((c) => c.text)).to.deep.equal(["A title", "One.", "Two."]);
    expect(parseSrtStrict(f(keys.srt).data.toString())).to.have.length(3);
  });

  it("adds chapters.json when the article has headings, and keeps the heading marks out of segments.json", async () => {
    const blobs = new MemoryBlobs();
    const keys = audioKeys("art", 1);
    expect((await storeTranscript(blobs, keys, [title, body, heading])).chapters).to.equal(true);
    expect(blobs.files.get(keys.chapters)!.info.contentType).to.equal("application/json");
    expect(JSON.parse(blobs.files.get(keys.chapters)!.data.toString())).to.deep.equal({ version: "1.2.0", chapters: [{ startTime: 0, title: "A title" }, { startTime: 4, title: "Part two" }] });
    expect(blobs.files.get(keys.segments)!.data.toString()).to.not.include("heading");
  });
});
