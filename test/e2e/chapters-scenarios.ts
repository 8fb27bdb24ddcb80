// Chapters from headings (issue 33, point 6), written once and run on both deployment shapes
// (chapters.test.ts: embedded default; chapters-stack.test.ts: the full stack). An article sent
// as HTML with `parse: true` and an h2 and an h3 is rendered by the real local engine; its
// headings come back as heading segments, `chapters.json` holds a chapter at each heading's
// start, the feed links the file, and the MP3 itself (ffmpeg's silence detection, which knows
// nothing of our timings) has the voice begin again at each chapter's start.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import { api, waitFor } from "../support/http.js";

export interface ChaptersTarget {
  /** Public gateway base URL. */
  url: string;
  /** A full token of a project of its own. */
  token: string;
}

const TITLE = "Night trains return";
const H2 = "Where the trains run";
const H3 = "What a ticket costs";

export const HEADED_HTML = `<!doctype html><html><head><title>${TITLE} | Rail News</title></head><body>
<nav><a href="/">Home</a></nav>
<article><h1>${TITLE}</h1>
<p>Night trains are back on the rails of Europe after years of decline. Operators report full sleeping cars on most routes this winter, and new lines open every season.</p>
<h2>${H2}</h2>
<p>The new lines connect Vienna with Paris, Brussels with Prague, and Zurich with Amsterdam. Most of them leave in the evening and arrive before breakfast.</p>
<h3>${H3}</h3>
<p>A seat costs about as much as a budget flight. A bed in a shared compartment costs a little more, and a private cabin costs about twice as much.</p>
</article><footer>Imprint</footer></body></html>`;

/** How far a chapter may lie from where its heading is heard (issue 33: ±250 ms). */
const TOLERANCE_S = 0.25;
/** A pause at least this long is a paragraph break (the pipeline puts 800 ms between paragraphs). */
const PARAGRAPH_PAUSE_S = 0.6;

/** Where the voice starts again after each pause in an MP3, and how long the pause was, by ffmpeg's silencedetect (seconds). */
export function voiceOnsets(mp3: Buffer): Array<{ at: number; after: number }> {
  const dir = mkdtempSync(join(tmpdir(), "chapters-"));
  try {
    const file = join(dir, "full.mp3");
    writeFileSync(file, mp3);
    const r = spawnSync("ffmpeg", ["-hide_banner", "-nostats", "-i", file, "-af", "silencedetect=noise=-45dB:d=0.12", "-f", "null", "-"], { encoding: "utf8" });
    if (r.status !== 0) throw new Error(`ffmpeg failed: ${r.stderr.slice(-300)}`);
    return [...r.stderr.matchAll(/silence_end: ([\d.]+) \| silence_duration: ([\d.]+)/g)].map((m) => ({ at: Number(m[1]), after: Number(m[2]) }));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export function chapterScenarios(target: () => ChaptersTarget): void {
  it("an HTML article with an h2 and an h3 gets heading segments, chapters.json at the headings' times, and podcast:chapters in the feed", async () => {
    const t = target();
    const A = api(t.url, t.token);
    const created = await A("POST", "/api/articles", { title: TITLE, text: HEADED_HTML, parse: true });
    expect(created.status, created.text).to.equal(200);
    const id: string = created.body.id;
    const article = await waitFor(
      `article ${id} ready`,
      async () => {
        const a = (await A("GET", `/api/articles/${id}`)).body?.article;
        if (a && ["errored", "rejected"].includes(a.status)) throw new Error(`article ended ${a.status}: ${JSON.stringify(a)}`);
        return a?.status === "ready" ? a : undefined;
      },
      180_000,
      250,
    );

    // Segments: the headings are headings, in reading order, each with its own start.
    const segs = await A("GET", `/api/articles/${id}/segments`);
    expect(segs.status, segs.text).to.equal(200);
    const segments: Array<{ kind: string; text: string; start: number; end: number }> = segs.body.segments;
    expect(segments.map((s) => s.kind)).to.deep.equal(["title", "paragraph", "heading", "paragraph", "heading", "paragraph"]);
    const [h2, h3] = segments.filter((s) => s.kind === "heading");
    expect([h2.text, h3.text]).to.deep.equal([H2, H3]);
    expect(h2.start).to.be.greaterThan(segments[1].end - 1e-9);
    expect(h3.start).to.be.greaterThan(segments[3].end - 1e-9);

    // chapters.json beside the MP3: the title at 0, then one chapter per heading where it is heard.
    const dir = String(article.audio).replace(/full\.mp3$/, "");
    const chaptersUrl = `${dir}chapters.json`;
    const res = await fetch(chaptersUrl);
    expect(res.status, chaptersUrl).to.equal(200);
    expect(res.headers.get("content-type")).to.match(/^application\/json/);
    const chapters = (await res.json()) as { version: string; chapters: Array<{ startTime: number; title: string }> };
    expect(chapters.version).to.equal("1.2.0");
    expect(chapters.chapters.map((c) => c.title)).to.deep.equal([TITLE, H2, H3]);
    expect(chapters.chapters[0].startTime).to.equal(0);
    expect(Math.abs(chapters.chapters[1].startTime - h2.start)).to.be.at.most(TOLERANCE_S);
    expect(Math.abs(chapters.chapters[2].startTime - h3.start)).to.be.at.most(TOLERANCE_S);

    // The audio itself: within the tolerance of each chapter the voice starts again after a pause as
    // long as a paragraph break (800 ms are put between paragraphs; sentences inside one pause less).
    const mp3 = Buffer.from(await (await fetch(String(article.audio))).arrayBuffer());
    const breaks = voiceOnsets(mp3).filter((o) => o.after >= PARAGRAPH_PAUSE_S);
    const measured = chapters.chapters.slice(1).map((c) => {
      const nearest = breaks.reduce((a, b) => (Math.abs(b.at - c.startTime) < Math.abs(a.at - c.startTime) ? b : a), { at: Number.POSITIVE_INFINITY, after: 0 });
      expect(Math.abs(nearest.at - c.startTime), `"${c.title}" at ${c.startTime} s; voice after paragraph breaks at ${breaks.map((b) => b.at).join(", ")}`).to.be.at.most(TOLERANCE_S);
      return `${c.startTime} s (voice at ${nearest.at} s after ${nearest.after} s of silence)`;
    });
    console.log(`      chapters: ${measured.join(", ")}`);

    // The feed links the file, in the Podcasting 2.0 namespace.
    const put = await A("PUT", "/api/player", { feed: { title: "Rail show", author: "Desk" } });
    expect(put.status, put.text).to.equal(200);
    const feed = await (await fetch(`${t.url}/feeds/${put.body.publicKey}.xml`)).text();
    expect(feed).to.include('xmlns:podcast="https://podcastindex.org/namespace/1.0"');
    expect(feed).to.include(`<podcast:chapters url="${chaptersUrl}" type="application/json+chapters"/>`);
  });

  it("a plain-text article gets no chapters, and its own en and em spaces stay plain text", async () => {
    const t = target();
    const A = api(t.url, t.token);
    // Lines that start with the characters extracted text marks headings with (lib/headings.ts): not headings here.
    const text = "\u2002A first line that starts with an en space.\n\n\u2003A second one, with an em space, reads on.";
    const created = await A("POST", "/api/articles", { title: "Plain spaces", text });
    expect(created.status, created.text).to.equal(200);
    const id: string = created.body.id;
    const article = await waitFor(`article ${id} ready`, async () => {
      const a = (await A("GET", `/api/articles/${id}`)).body?.article;
      return a?.status === "ready" ? a : undefined;
    }, 180_000, 250);
    const segments: Array<{ kind: string }> = (await A("GET", `/api/articles/${id}/segments`)).body.segments;
    expect(segments.map((s) => s.kind)).to.deep.equal(["title", "paragraph", "paragraph"]);
    expect((await fetch(String(article.audio).replace(/full\.mp3$/, "chapters.json"))).status).to.equal(404);
  });
}
