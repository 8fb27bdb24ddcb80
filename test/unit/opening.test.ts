// services/articles/opening.ts: the opening of an article for feed item descriptions.
import { expect } from "chai";
import { cutAtWord, OPENING_MAX_CHARS, openingOf } from "../../services/articles/opening.js";

describe("article opening", () => {
  it("is the first paragraph (blank lines part them; without any, lines do)", () => {
    expect(openingOf("First paragraph here.\nstill first.\n\nSecond.", "T")).to.equal("First paragraph here. still first.");
    expect(openingOf("Line one.\nLine two.", "T")).to.equal("Line one.");
    expect(openingOf("  \r\n\r\n  Spaced   out\ttext.  ", "T")).to.equal("Spaced out text.");
  });

  it("skips the title repeated and headings before the first paragraph that reads as one", () => {
    const text = "Rain in Berlin\n\nThe morning\n\nIt rained all night, and the river rose.\n\nMore.";
    expect(openingOf(text, "Rain  in berlin")).to.equal("It rained all night, and the river rose.");
    // Nothing but short lines: the first of them will do.
    expect(openingOf("Menu\n\nMore", "T")).to.equal("Menu");
    expect(openingOf("", "T")).to.equal("");
  });

  it("is cut at a word within the bound, with an ellipsis, and never splits a character", () => {
    const long = "word ".repeat(200);
    const cut = openingOf(long, "T");
    expect(Array.from(cut).length).to.be.at.most(OPENING_MAX_CHARS);
    expect(cut.endsWith("word…")).to.equal(true);
    const emoji = "😀".repeat(400);
    const e = cutAtWord(emoji);
    expect(Array.from(e)).to.have.length(OPENING_MAX_CHARS);
    expect(e.endsWith("😀…")).to.equal(true);
    expect(cutAtWord("Short enough.")).to.equal("Short enough.");
    expect(cutAtWord(`${"a".repeat(200)}, ${"b".repeat(200)}`)).to.equal(`${"a".repeat(200)}…`);
  });

  it("reads only the start of a long text", () => {
    const huge = `${"x".repeat(20_000)}\n\nlater`;
    expect(openingOf(huge, "T").length).to.be.at.most(OPENING_MAX_CHARS);
  });
});
