// Issue 35, point 4: the language of an article created without one, and the voice that follows.
import { expect } from "chai";
import { detectLanguage, loadLanguageDetector, localeOfLanguage } from "../../lib/lang-detect.js";
import { voiceForText } from "../../services/articles/voice-choice.js";
import { ENGLISH_PARAGRAPHS, GERMAN_PARAGRAPHS, MIXED_TITLES } from "../fixtures/news-paragraphs.js";

const FRENCH =
  "Le conseil municipal a décidé mardi soir de garder la bibliothèque de la rue des Tilleuls ouverte pendant cinq ans encore. Les élus ont rappelé qu'elle n'avait jamais accueilli autant de lecteurs que l'hiver dernier.";

describe("language detection", function () {
  this.timeout(30_000);
  before(() => loadLanguageDetector());

  it("classifies 20 English and 20 German news paragraphs of 200+ characters, every one", async () => {
    for (const p of [...ENGLISH_PARAGRAPHS, ...GERMAN_PARAGRAPHS]) expect(p.length).to.be.greaterThan(200);
    expect(ENGLISH_PARAGRAPHS).to.have.length(20);
    expect(GERMAN_PARAGRAPHS).to.have.length(20);
    const wrong: string[] = [];
    for (const p of ENGLISH_PARAGRAPHS) if ((await detectLanguage("", p))?.language !== "en") wrong.push(p.slice(0, 40));
    for (const p of GERMAN_PARAGRAPHS) if ((await detectLanguage("", p))?.language !== "de") wrong.push(p.slice(0, 40));
    expect(wrong).to.deep.equal([]);
    // Each maps to the platform's locale.
    expect((await detectLanguage("", GERMAN_PARAGRAPHS[0]))?.locale).to.equal("de-DE");
    expect((await detectLanguage("", ENGLISH_PARAGRAPHS[0]))?.locale).to.equal("en-US");
  });

  it("is not flipped by a short title in the other language: the text decides", async () => {
    for (const m of MIXED_TITLES) {
      // The title alone reads as the other language (or as none): it is a real test of the weighting.
      expect((await detectLanguage("", m.title))?.language, m.title).to.not.equal(m.lang);
      expect((await detectLanguage(m.title, m.text))?.language, m.title).to.equal(m.lang);
    }
  });

  it("reads the words of an HTML body, not its markup", async () => {
    const html = `<article><h1 class="headline">x</h1>${GERMAN_PARAGRAPHS.slice(0, 2)
      .map((p) => `<p class="article-body__paragraph" data-tracking="paragraph">${p}</p>`)
      .join("")}</article>`;
    expect((await detectLanguage("Breaking News", html, true))?.language).to.equal("de");
  });

  it("names no language for a text too short to tell, and no locale for a language no voice speaks", async () => {
    expect(await detectLanguage("T", "x")).to.equal(undefined);
    expect(await detectLanguage("", "1234 5678")).to.equal(undefined);
    expect(await detectLanguage("Titre", FRENCH)).to.deep.equal({ language: "fr" });
    expect(localeOfLanguage("de")).to.equal("de-DE");
    expect(localeOfLanguage("fr")).to.equal(undefined);
  });

  it("picks the project's default voice for the detected language, and warns when no voice speaks it", async () => {
    const english = { voice: "alloy", lang: "en-US" };
    // The default voice speaks German too: it reads the German text in German.
    expect(await voiceForText(english, "Stadtrat", GERMAN_PARAGRAPHS[0], false)).to.deep.equal({ voice: "alloy", lang: "de-DE" });
    expect(await voiceForText(english, "Council", ENGLISH_PARAGRAPHS[0], false)).to.deep.equal(english);
    // A German-only project voice over an English text: the platform's default voice in English.
    expect(await voiceForText({ voice: "de-DE-KatjaNeural", lang: "de-DE" }, "Council", ENGLISH_PARAGRAPHS[0], false)).to.deep.equal({ voice: "alloy", lang: "en-US" });
    // An English-only (Kokoro) project voice keeps English texts.
    expect(await voiceForText({ voice: "af_heart", lang: "en-US" }, "Council", ENGLISH_PARAGRAPHS[1], false)).to.deep.equal({ voice: "af_heart", lang: "en-US" });
    // French: no voice speaks it; the default reads it, and the warning says so.
    const french = await voiceForText(english, "Bibliothèque", FRENCH, false);
    expect(french).to.include(english);
    expect(french.warning).to.match(/French \(fr\).*no voice.*alloy \(en-US\)/);
    // Too short to tell: the default, without a warning.
    expect(await voiceForText(english, "Hi", "Ok.", false)).to.deep.equal(english);
  });
});
