// Heading marks in extracted text (lib/headings.ts): extraction marks an HTML article's h2 and h3
// paragraphs, the audio service reads them from the plain text it is handed, and every other
// reader of the stored text (openings, the recrawl's comparison) sees the text it saw before.
import { expect } from "chai";
import { HEADING_MARKS, withoutHeadingMarks } from "../../lib/headings.js";
import { extractMainContent } from "../../services/articles/content/extract.js";
import { openingOf } from "../../services/articles/opening.js";
import { plainBlocks } from "../../services/audio/text/html.js";
import { prepareSentences } from "../../services/audio/text/index.js";

const PAGE = `<html><head><title>Night trains | Rail News</title></head><body><nav>Home</nav><article>
<h1>Night trains</h1>
<p>Night trains are back on the rails of Europe after years of decline, and new lines open every season.</p>
<h2>Where  they <em>run</em></h2>
<p>&ensp;They connect Vienna with Paris and Zurich with Amsterdam, leaving in the evening.</p>
<h3>Tickets</h3>
<p>A seat costs about as much as a budget flight; a private cabin costs about twice as much.</p>
</article></body></html>`;

// The same text as extraction wrote it before headings were marked.
const collapse = (s: string) => s.replace(/\s+/g, " ").trim();

describe("heading marks in extracted text", () => {
  const { text, paragraphs } = extractMainContent(PAGE);

  it("extraction marks h2 and h3 paragraphs and nothing else (a publisher's own en space included)", () => {
    expect(paragraphs.map((p) => [p[0] === HEADING_MARKS[2] ? 2 : p[0] === HEADING_MARKS[3] ? 3 : 0, collapse(p)])).to.deep.equal([
      [0, "Night trains are back on the rails of Europe after years of decline, and new lines open every season."],
      [2, "Where they run"],
      [0, "They connect Vienna with Paris and Zurich with Amsterdam, leaving in the evening."],
      [3, "Tickets"],
      [0, "A seat costs about as much as a budget flight; a private cabin costs about twice as much."],
    ]);
  });

  it("the audio service reads them from the plain text, as headings of their level", () => {
    expect(plainBlocks(text)).to.deep.equal([
      { text: "Night trains are back on the rails of Europe after years of decline, and new lines open every season." },
      { text: "Where they run", heading: 2 },
      { text: "They connect Vienna with Paris and Zurich with Amsterdam, leaving in the evening." },
      { text: "Tickets", heading: 3 },
      { text: "A seat costs about as much as a budget flight; a private cabin costs about twice as much." },
    ]);
    const prepared = prepareSentences({ title: "Night trains", text, lang: "en-US" });
    expect(prepared.map((p) => p.heading)).to.deep.equal([undefined, undefined, 2, undefined, 3, undefined]);
    expect(prepared[2].shown).to.deep.equal(["Where they run"]);
  });

  it("a publisher's plain text, as the articles service hands it over, marks no heading", () => {
    const own = "\u2002Indented with an en space.\n\n\u2003And with an em space.";
    expect(plainBlocks(own).map((b) => b.heading)).to.deep.equal([2, 3]);
    expect(plainBlocks(withoutHeadingMarks(own))).to.deep.equal([{ text: "Indented with an en space." }, { text: "And with an em space." }]);
    expect(withoutHeadingMarks("No marks here.")).to.equal("No marks here.");
  });

  it("readers that collapse whitespace see the text as before: openings and the recrawl's comparison", () => {
    const unmarked = paragraphs.map((p) => p.trim()).join("\n\n");
    expect(text).to.not.equal(unmarked);
    expect(collapse(text)).to.equal(collapse(unmarked));
    expect(openingOf(text, "Night trains")).to.equal(openingOf(unmarked, "Night trains"));
    expect(openingOf(text, "Night trains")).to.equal(paragraphs[0]);
  });
});
