// Where an article is cut into provider requests: few requests for articles of short paragraphs,
// and cuts that stay put when one paragraph is edited (so the chunk cache keeps the rest).
import { expect } from "chai";
import { PARAGRAPH_BREAK, planChunks } from "../../services/audio/pipeline.js";

const SENTENCES = [
  "The council met on Tuesday.",
  "It approved the budget for next year after a long debate.",
  "Critics want more money for schools and libraries.",
  "The mayor will sign it next week.",
  "Residents asked for more bus routes.",
  "A second vote was postponed until the auditors report.",
  "The harbour project will cost about 3.5 million dollars.",
];

/** n paragraphs of one to three sentences, each different. */
function shortParagraphs(n: number): string[] {
  return Array.from({ length: n }, (_, i) => {
    const k = 1 + (i % 3);
    return `Item ${i + 1}. ` + Array.from({ length: k }, (_, j) => SENTENCES[(i + j) % SENTENCES.length]).join(" ");
  });
}

const texts = (paragraphs: string[]) => planChunks(paragraphs, "en-US", 4096, { packParagraphs: true }).map((c) => c.text);

describe("chunk plan for cloud providers", () => {
  it("packs short paragraphs into a few requests within the provider's limit, keeping every word in order", () => {
    const paragraphs = ["Council news", ...shortParagraphs(200)];
    const chunks = planChunks(paragraphs, "en-US", 4096, { packParagraphs: true });
    const unpacked = planChunks(paragraphs, "en-US", 4096);
    expect(unpacked.length).to.be.greaterThan(190);
    expect(chunks.length).to.be.lessThan(unpacked.length / 5);
    expect(chunks.every((c) => c.text.length <= 4096)).to.equal(true);
    const words = (s: string) => s.split(/\s+/).filter(Boolean);
    expect(chunks.flatMap((c) => words(c.text))).to.deep.equal(paragraphs.flatMap(words));
    // Every request ends a paragraph, so the pipeline's pauses and chunk ends still line up.
    expect(chunks.every((c) => c.paragraphEnd)).to.equal(true);
    expect(chunks[chunks.length - 1].paragraph).to.equal(paragraphs.length - 1);
  });

  it("an edited paragraph changes only the request that holds it", () => {
    const paragraphs = ["Council news", ...shortParagraphs(120)];
    const before = texts(paragraphs);
    for (const at of [10, 57, 100]) {
      const edited = [...paragraphs];
      edited[at] = `${edited[at]} One more sentence was added here.`;
      const after = texts(edited);
      const changed = after.filter((t) => !before.includes(t));
      expect(changed, `edit at ${at}`).to.have.length(1);
      expect(changed[0]).to.include("One more sentence was added here.");
      expect(after.length).to.equal(before.length);
    }
  });

  it("an inserted paragraph disturbs at most the requests around it", () => {
    const paragraphs = ["Council news", ...shortParagraphs(120)];
    const before = texts(paragraphs);
    const inserted = [...paragraphs.slice(0, 60), "A brand new paragraph about the weather.", ...paragraphs.slice(60)];
    const changed = texts(inserted).filter((t) => !before.includes(t));
    expect(changed.length).to.be.within(1, 2);
  });

  it("splits a paragraph longer than the limit at sentences, on its own", () => {
    const long = Array.from({ length: 90 }, (_, i) => SENTENCES[i % SENTENCES.length]).join(" ");
    const paragraphs = ["Title", ...shortParagraphs(30), long, ...shortParagraphs(30)];
    const chunks = planChunks(paragraphs, "en-US", 1000, { packParagraphs: true });
    const own = chunks.filter((c) => c.paragraph === 31);
    expect(own.length).to.be.greaterThan(2);
    expect(own.every((c) => !c.text.includes(PARAGRAPH_BREAK) && c.text.length <= 1000)).to.equal(true);
    expect(own[own.length - 1].paragraphEnd).to.equal(true);
  });

  it("keeps the opening in small chunks for the preview", () => {
    const paragraphs = ["Council news", ...shortParagraphs(50)];
    const chunks = planChunks(paragraphs, "en-US", 4096, { packParagraphs: true, openingChars: 120 });
    expect(chunks[0].text).to.equal("Council news");
    expect(chunks[1].text.length).to.be.at.most(120);
  });
});

describe("chunk plan for one-block articles and long sentences", () => {
  const block = Array.from({ length: 260 }, (_, i) => SENTENCES[i % SENTENCES.length]).join(" ");

  it("packs a 20,000-character single paragraph after a two-request opening", () => {
    const text = block.slice(0, block.lastIndexOf(".", 20_000) + 1);
    const chunks = planChunks(["One block", text], "en-US", 4096, { packParagraphs: true });
    expect(chunks.length).to.be.at.most(Math.ceil(text.length / 3500) + 2);
    expect(chunks[0].text).to.equal("One block");
    // The opening ends at sentences near 420 and 600 characters, for a preview near 30 s.
    expect(chunks[1].text.length).to.be.within(380, 560);
    expect(chunks[1].text.length + chunks[2].text.length).to.be.within(560, 760);
    expect(chunks.every((c) => c.text.length <= 4096 && c.sentenceEnd !== false)).to.equal(true);
    expect(chunks.map((c) => c.text).join(" ")).to.equal(`One block ${text}`);
  });

  it("splits a sentence only when it is longer than a request may be, and then after a clause", () => {
    const long = `${Array.from({ length: 20 }, (_, i) => `the committee heard witness number ${i + 1} on the harbour plan`).join(", ")}.`;
    expect(long.length).to.be.greaterThan(1000);
    const local = planChunks(["T", long], "en-US", 300, { hardMax: 1500 });
    expect(local.map((c) => c.text)).to.deep.equal(["T", long]);
    const cloud = planChunks(["T", long, "Short one."], "en-US", 500, { packParagraphs: true });
    const parts = cloud.filter((c) => c.paragraph === 1);
    expect(parts.length).to.be.greaterThan(2);
    for (const p of parts.slice(0, -1)) {
      expect(p.text).to.match(/,$/);
      expect(p.sentenceEnd).to.equal(false);
    }
    expect(parts[parts.length - 1].sentenceEnd).to.equal(true);
    expect(parts.map((c) => c.text).join(" ")).to.equal(long);
  });
});
