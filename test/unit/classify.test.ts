import { expect } from "chai";
import { classifyContent, CONTENT_TYPES, explainContent, SCORE_THRESHOLD } from "../../services/articles/content/classify.js";
import { NEUTRAL, SAMPLES } from "./classify.samples.js";

const TOPICS = ["sports", "business", "culture", "science"];

describe("classifyContent", () => {
  it("has the documented taxonomy", () => {
    expect([...CONTENT_TYPES]).to.deep.equal(["news", "opinion", "sports", "business", "culture", "science", "press_release", "advertorial"]);
  });

  it("has at least two samples per type and language", () => {
    for (const type of CONTENT_TYPES) {
      for (const lang of ["en", "de"]) expect(SAMPLES.filter((s) => s.expect === type && s.lang === lang), `${type}/${lang}`).to.have.length.of.at.least(2);
    }
  });

  for (const s of SAMPLES) {
    it(`detects ${s.expect} (${s.lang}): ${s.title}`, () => {
      const result = classifyContent(s);
      const names = result.map((r) => r.name);
      expect(names, JSON.stringify(result)).to.include(s.expect);
      // A topic article must not be mistaken for another topic …
      if (TOPICS.includes(s.expect)) expect(names.filter((n) => TOPICS.includes(n) && n !== s.expect)).to.deep.equal([]);
      // … and only genuine releases and ads get those labels.
      for (const marker of ["press_release", "advertorial"]) if (s.expect !== marker) expect(names).not.to.include(marker);
    });
  }

  for (const s of NEUTRAL) {
    it(`finds nothing in neutral text (${s.lang}): ${s.title}`, () => {
      expect(classifyContent(s)).to.deep.equal([]);
    });
  }

  it("returns scores in [0, 1] at or above the threshold, best first, identical on every call", () => {
    for (const s of SAMPLES) {
      const a = classifyContent(s);
      for (const r of a) expect(r.score).to.be.within(SCORE_THRESHOLD, 1);
      for (let i = 1; i < a.length; i++) expect(a[i - 1].score).to.be.at.least(a[i].score);
      expect(classifyContent(s)).to.deep.equal(a);
    }
  });

  it("does not take a police report ('Anzeige erstattet') for an advert", () => {
    const r = classifyContent({
      lang: "de",
      title: "Fahrraddiebstahl am Bahnhof",
      text: "Am Dienstag wurde am Bahnhof ein Fahrrad gestohlen. Der Besitzer hat Anzeige erstattet, teilte die Polizei mit. Laut Polizei gibt es noch keine Hinweise auf die Täter. Zeugen werden gebeten, sich bei der Polizei zu melden.",
    });
    expect(r.map((x) => x.name)).not.to.include("advertorial");
    expect(r.map((x) => x.name)).to.include("news");
  });

  it("does not take a quoted 'I think' in a report for opinion", () => {
    const r = classifyContent({
      lang: "en",
      title: "Harbour reopens after storm repairs",
      text: "The harbour reopened to boats on Friday after three weeks of repairs, officials said. “I think everyone is relieved,” said harbour master Ann Cole, who told reporters that the pier had been rebuilt. According to the council, the repairs cost 1.2 million.",
    });
    expect(r.map((x) => x.name)).not.to.include("opinion");
  });

  it("accepts regional language tags and ignores unsupported languages", () => {
    const sample = SAMPLES.find((s) => s.expect === "sports" && s.lang === "de")!;
    expect(classifyContent({ ...sample, lang: "de-AT" })).to.deep.equal(classifyContent(sample));
    expect(classifyContent({ ...sample, lang: "fr" })).to.deep.equal([]);
    expect(classifyContent({ title: "", text: "", lang: "en" })).to.deep.equal([]);
  });

  it("explains each score with the cues that produced it", () => {
    const s = SAMPLES.find((x) => x.expect === "press_release" && x.lang === "de")!;
    const pr = explainContent(s).find((t) => t.name === "press_release")!;
    expect(pr.matches.map((m) => m.cue)).to.include.members(["pressekontakt", "pressemitteilung"]);
    const pm = pr.matches.find((m) => m.cue === "pressemitteilung")!;
    expect(pm.inTitle).to.equal(true);
  });

  it("does not let length alone make a topic: one sports word in a long text is not sports", () => {
    const filler = NEUTRAL[0].text.repeat(6);
    const r = classifyContent({ lang: "en", title: "Gardening notes", text: `${filler} My neighbour watched the football on Saturday. ${filler}` });
    expect(r.map((x) => x.name)).not.to.include("sports");
  });
});
