import { expect } from "chai";
import { htmlToParagraphs, packChunks, prepareText, splitSentences } from "../../services/audio/text/index.js";

describe("audio text preparation", () => {
  describe("HTML parsing", () => {
    const page = `<html><head><title>Site title</title><style>p { color: red }</style></head><body>
      <header><a href="/">Daily News</a></header>
      <nav><ul><li><a href="/politics">Politics</a></li><li>Sports</li></ul></nav>
      <article>
        <h1>City council approves budget</h1>
        <p>The council voted on Tuesday &amp; the mayor signed &quot;the plan&quot; at once.</p>
        <figure><img src="a.jpg" alt="Council"><figcaption>Photo: the council chamber</figcaption></figure>
        <script>trackPageView("budget")</script><noscript>Enable JavaScript</noscript>
        <div>Critics <em>disagreed</em>.</div><blockquote>We will watch closely.</blockquote>
        <aside>Related: other stories</aside>
        <form><input name="q"><button>Subscribe</button></form>
      </article>
      <footer>© Daily News</footer></body></html>`;

    it("keeps the visible article text, one paragraph per block, entities decoded", () => {
      expect(htmlToParagraphs(page)).to.deep.equal([
        "City council approves budget",
        'The council voted on Tuesday & the mayor signed "the plan" at once.',
        "Critics disagreed.",
        "We will watch closely.",
      ]);
    });

    it("prepareText with parse puts the title first and normalises the parsed text", () => {
      const paras = prepareText({ title: "Budget <b>2024</b>", text: page, lang: "en-US", parse: true });
      expect(paras[0]).to.equal("Budget twenty twenty-four");
      expect(paras[2]).to.equal('The council voted on Tuesday and the mayor signed "the plan" at once.');
      expect(paras.join(" ")).not.to.match(/Politics|Photo|trackPageView|Subscribe|Daily News|Related|JavaScript/);
    });

    it("without parse, markup-free text is split into paragraphs at blank lines", () => {
      const text = "First paragraph\nstill the first.\n\n  Second one.  \n\n\n";
      expect(prepareText({ title: " Title ", text, lang: "en-US" })).to.deep.equal(["Title", "First paragraph still the first.", "Second one."]);
    });
  });

  describe("English normalisation", () => {
    const prep = (text: string) => prepareText({ title: "T", text, lang: "en-US" })[1];

    it("expands common abbreviations and keeps a sentence-final period", () => {
      expect(prep("Dr. Smith met Mrs. Jones, e.g. at lunch, i.e. at noon.")).to.equal("Doctor Smith met Missus Jones, for example at lunch, that is at noon.");
      expect(prep("Apples, pears etc. The rest waited.")).to.equal("Apples, pears et cetera. The rest waited.");
    });

    it("reads numbers, decimals, percentages, ordinals and years", () => {
      expect(prep("About 1,250 people (12%) paid $3.50 each.")).to.equal("About one thousand two hundred fifty people (twelve percent) paid three dollars and fifty cents each.");
      expect(prep("The cat weighs 3.25 kg.")).to.equal("The cat weighs three point two five kilograms.");
      expect(prep("It was the 21st meeting since 1999.")).to.equal("It was the twenty-first meeting since nineteen ninety-nine.");
      expect(prep("On October 3, 2024 at 10:30 it began.")).to.equal("On October third, twenty twenty-four at ten thirty it began.");
      expect(prep("Sales grew 10-20 percent in the 1990s.")).to.equal("Sales grew ten to twenty percent in the nineteen nineties.");
    });

    it("reads web and mail addresses by their host", () => {
      expect(prep("Details at https://www.example.com/news/2024/budget?id=7. Or mail press@city.gov.")).to.equal("Details at example dot com. Or mail press at city dot gov.");
    });

    it("leaves raw text untouched apart from paragraph splitting", () => {
      const raw = prepareText({ title: "T", text: "Dr. Smith paid $3.50 on 3/4.\n\nNext.", lang: "en-US", isRaw: true });
      expect(raw).to.deep.equal(["T", "Dr. Smith paid $3.50 on 3/4.", "Next."]);
    });
  });

  describe("German normalisation", () => {
    const prep = (text: string) => prepareText({ title: "T", text, lang: "de-DE" })[1];

    it("expands abbreviations", () => {
      expect(prep("Das gilt z. B. für Häuser, d. h. für Mieter usw. Dann kam Dr. Müller.")).to.equal(
        "Das gilt zum Beispiel für Häuser, das heißt für Mieter und so weiter. Dann kam Doktor Müller.",
      );
      expect(prep("Es kostet ca. 3,5 Mio. Euro, vgl. z.B. den Plan.")).to.equal("Es kostet circa drei Komma fünf Millionen Euro, vergleiche zum Beispiel den Plan.");
    });

    it("reads numbers with German separators, ordinals, dates and years", () => {
      expect(prep("Es kamen 1.250 Menschen, 12 % mehr.")).to.equal("Es kamen eintausendzweihundertfünfzig Menschen, zwölf Prozent mehr.");
      expect(prep("Das kostet 3,50 € oder 2,5 Mrd. €.")).to.equal("Das kostet drei Euro fünfzig oder zwei Komma fünf Milliarden Euro.");
      expect(prep("Am 3. Oktober 1990 um 10:30 Uhr.")).to.equal("Am dritten Oktober neunzehnhundertneunzig um zehn Uhr dreißig.");
      expect(prep("Er wohnt in der 2. Etage.")).to.equal("Er wohnt in der zweiten Etage.");
      expect(prep("Termin: 03.10.2024.")).to.equal("Termin: dritter Oktober zweitausendvierundzwanzig.");
    });

    it("reads a URL with the German word for dot", () => {
      expect(prep("Mehr unter www.beispiel.de/seite.")).to.equal("Mehr unter beispiel Punkt de.");
    });
  });

  describe("sentence splitting", () => {
    it("does not split after titles, initials, decimals or inside URLs (English)", () => {
      expect(splitSentences("Dr. Smith arrived at 3.5 km/h. J. R. R. Tolkien wrote it. See www.Example.com/a.Test for more. Done!", "en-US")).to.deep.equal([
        "Dr. Smith arrived at 3.5 km/h.",
        "J. R. R. Tolkien wrote it.",
        "See www.Example.com/a.Test for more.",
        "Done!",
      ]);
    });

    it("does not split after z. B., Mio. or a date ordinal (German)", () => {
      expect(splitSentences("Das gilt z. B. für Häuser. Am 3. Oktober ist Feiertag. Es kostet ca. 3,5 Mio. Euro. Prof. Dr. Müller sagt: Ja! Und dann?", "de-DE")).to.deep.equal([
        "Das gilt z. B. für Häuser.",
        "Am 3. Oktober ist Feiertag.",
        "Es kostet ca. 3,5 Mio. Euro.",
        "Prof. Dr. Müller sagt: Ja!",
        "Und dann?",
      ]);
    });
  });

  describe("chunk packing", () => {
    it("packs whole sentences up to the limit and marks paragraph ends", () => {
      const chunks = packChunks(["A title", "One is short. Two is short. Three is a longer sentence.", "Last."], 30);
      // Each chunk names the sentences it speaks: the timed segments are built from them.
      const piece = (paragraph: number, sentence: number, chars: number) => ({ paragraph, sentence, chars, start: true, end: true });
      expect(chunks).to.deep.equal([
        { text: "A title", pieces: [piece(0, 0, 7)], paragraph: 0, paragraphEnd: true, sentenceEnd: true },
        { text: "One is short. Two is short.", pieces: [piece(1, 0, 13), piece(1, 1, 13)], paragraph: 1, paragraphEnd: false, sentenceEnd: true },
        { text: "Three is a longer sentence.", pieces: [piece(1, 2, 27)], paragraph: 1, paragraphEnd: true, sentenceEnd: true },
        { text: "Last.", pieces: [piece(2, 0, 5)], paragraph: 2, paragraphEnd: true, sentenceEnd: true },
      ]);
    });

    it("splits an overlong sentence at word boundaries without losing words", () => {
      const sentence = "This sentence keeps going with many small words and never seems to stop at all";
      const chunks = packChunks([sentence], 20);
      for (const c of chunks) expect(c.text.length).to.be.at.most(20);
      expect(chunks.map((c) => c.text).join(" ")).to.equal(sentence);
      expect(chunks.filter((c) => c.paragraphEnd)).to.have.length(1);
    });

    it("rejects a non-positive limit", () => {
      expect(() => packChunks(["x"], 0)).to.throw(RangeError);
    });
  });
});
