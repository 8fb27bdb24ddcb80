import { expect } from "chai";
import { normalizeParagraph, prepareText, splitSentences } from "../../services/audio/text/index.js";

const en = (text: string) => normalizeParagraph(text, "en-US");
const de = (text: string) => normalizeParagraph(text, "de-DE");

describe("speech normalisation (en-US)", () => {
  it("reads cardinals with thousands separators, negatives and decimals", () => {
    expect(en("The city counted 1,234,567 residents, up 12,500 from 2020.")).to.equal(
      "The city counted one million two hundred thirty-four thousand five hundred sixty-seven residents, up twelve thousand five hundred from twenty twenty.",
    );
    expect(en("The index closed at -1,234.5 points after a 0.75 point drop.")).to.equal(
      "The index closed at minus one thousand two hundred thirty-four point five points after a zero point seven five point drop.",
    );
  });

  it("reads ordinals and tells years from counts", () => {
    expect(en("She finished 1st, he was 2nd and the 23rd runner fell.")).to.equal("She finished first, he was second and the twenty-third runner fell.");
    expect(en("The wall fell in 1990; by 2008 the plant had closed, and in 2026 it reopened.")).to.equal(
      "The wall fell in nineteen ninety; by two thousand eight the plant had closed, and in twenty twenty-six it reopened.",
    );
    expect(en("Sales peaked in the 1980s and again in the '90s.")).to.equal("Sales peaked in the nineteen eighties and again in the nineties.");
  });

  it("reads dates in the common notations", () => {
    expect(en("The vote is set for 11/22/2026.")).to.equal("The vote is set for November twenty-second, twenty twenty-six.");
    expect(en("The filing is dated 2026-11-22.")).to.equal("The filing is dated November twenty-second, twenty twenty-six.");
    expect(en("Polls open on November 22, 2026, in most states.")).to.equal("Polls open on November twenty-second, twenty twenty-six, in most states.");
    expect(en("The summit ends on 22 November 2026.")).to.equal("The summit ends on the twenty-second of November, twenty twenty-six.");
    expect(en("It was signed on Jan. 5 in Geneva.")).to.equal("It was signed on January fifth in Geneva.");
  });

  it("reads clock times on both clocks", () => {
    expect(en("The briefing starts at 2:30 pm and ends at 4 p.m. Reporters left.")).to.equal("The briefing starts at two thirty pee em and ends at four pee em. Reporters left.");
    expect(en("The train leaves at 14:30 and arrives at 9:05.")).to.equal("The train leaves at two thirty pee em and arrives at nine oh five.");
  });

  it("reads money with symbols, codes, cents and scales", () => {
    expect(en("A coffee costs $5, a sandwich $5.50 and a paper 99 cents.")).to.equal(
      "A coffee costs five dollars, a sandwich five dollars and fifty cents and a paper ninety-nine cents.",
    );
    expect(en("Fares rose to €3.50 in Paris, £2.20 in London and CHF 4 in Zurich.")).to.equal(
      "Fares rose to three euros and fifty cents in Paris, two pounds and twenty pence in London and four Swiss francs in Zurich.",
    );
    expect(en("The bank paid $1.5 billion, or 10 EUR per share, and the club £25m.")).to.equal(
      "The bank paid one point five billion dollars, or ten euros per share, and the club twenty-five million pounds.",
    );
    expect(en("Stamps cost $0.73 and $1.")).to.equal("Stamps cost seventy-three cents and one dollar.");
  });

  it("reads percentages, units and ranges", () => {
    expect(en("Turnout was 61.5%, up 3% on 2019.")).to.equal("Turnout was sixty-one point five percent, up three percent on twenty nineteen.");
    expect(en("The storm moved at 25 km/h, dropped 120 mm of rain over 40 km and it was 1 °C (34 °F).")).to.equal(
      "The storm moved at twenty-five kilometers per hour, dropped one hundred twenty millimeters of rain over forty kilometers and it was one degree Celsius (thirty-four degrees Fahrenheit).",
    );
    expect(en("Each box holds 2 kg, 500 g, 1 l or 250 ml; the 3 m pole weighs 40 cm less.")).to.equal(
      "Each box holds two kilograms, five hundred grams, one liter or two hundred fifty milliliters; the three meters pole weighs forty centimeters less.",
    );
    expect(en("The battery stores 75 kWh and the update is 1.2 GB, not 800 MB.")).to.equal(
      "The battery stores seventy-five kilowatt hours and the update is one point two gigabytes, not eight hundred megabytes.",
    );
    expect(en("Expect 10–20 cm of snow and 3-5 days of cold; the Jets won 3-1.")).to.equal(
      "Expect ten to twenty centimeters of snow and three to five days of cold; the Jets won three to one.",
    );
  });

  it("reads phone numbers digit by digit", () => {
    expect(en("Call the hotline at (555) 123-4567 or +1 202 555 0147.")).to.equal(
      "Call the hotline at five five five, one two three, four five six seven or plus one, two zero two, five five five, zero one four seven.",
    );
  });

  it("expands common abbreviations", () => {
    expect(en("Dr. Lee, Mr. Diaz and Mrs. Park met Prof. Kim, i.e. the panel, vs. approx. 40 protesters.")).to.equal(
      "Doctor Lee, Mister Diaz and Missus Park met Professor Kim, that is the panel, versus approximately forty protesters.",
    );
    expect(en("They sold fruit, e.g. apples, pears etc. The stall closed at No. 7.")).to.equal(
      "They sold fruit, for example apples, pears et cetera. The stall closed at number seven.",
    );
  });

  it("reads web and mail addresses by their host", () => {
    expect(en("Read more at https://www.nytimes.com/2026/11/22/us/vote.html?smid=tw, on bbc.co.uk or mail tips@example.org.")).to.equal(
      "Read more at nytimes dot com, on bbc dot co dot uk or mail tips at example dot org.",
    );
    expect(en("Write to press_office@city.gov.")).to.equal("Write to press underscore office at city dot gov.");
  });

  it("reads roman numerals where the context is clear", () => {
    expect(en("King Charles III spoke about World War II in Chapter IV. I agree.")).to.equal(
      "King Charles the Third spoke about World War two in Chapter four. I agree.",
    );
  });
});

describe("speech normalisation (de-DE)", () => {
  it("reads cardinals with German separators, negatives and decimals", () => {
    expect(de("Die Stadt zählte 1.234.567 Einwohner, der Index fiel um -2,5 Punkte.")).to.equal(
      "Die Stadt zählte eine Million zweihundertvierunddreißigtausendfünfhundertsiebenundsechzig Einwohner, der Index fiel um minus zwei Komma fünf Punkte.",
    );
    expect(de("Es kamen 1 Frau, 1 Kind und 101 Gäste.")).to.equal("Es kamen eine Frau, ein Kind und einhundertein Gäste.");
  });

  it("inflects ordinals from the words around them", () => {
    expect(de("Der 1. FC Köln stieg in die 2. Liga ab, ein 3. Versuch folgt.")).to.equal("Der erste Eff Zeh Köln stieg in die zweite Liga ab, ein dritter Versuch folgt.");
    expect(de("Zum 3. Mal belegte sie den 2. Platz, im 19. Jh. ein Novum.")).to.equal(
      "Zum dritten Mal belegte sie den zweiten Platz, im neunzehnten Jahrhundert ein Novum.",
    );
  });

  it("tells years from counts", () => {
    expect(de("1989 fiel die Mauer, seit 1990 ist das Land vereint.")).to.equal(
      "neunzehnhundertneunundachtzig fiel die Mauer, seit neunzehnhundertneunzig ist das Land vereint.",
    );
    expect(de("Rund 1500 Menschen kamen, im Jahr 2024 waren es 1800 Gäste.")).to.equal(
      "Rund eintausendfünfhundert Menschen kamen, im Jahr zweitausendvierundzwanzig waren es eintausendachthundert Gäste.",
    );
    expect(de("In den 1990er Jahren und den 80ern wuchs die Stadt.")).to.equal("In den neunzehnhundertneunziger Jahren und den 80ern wuchs die Stadt.");
  });

  it("reads dates in the common notations", () => {
    expect(de("Die Wahl findet am 22.11.2026 statt.")).to.equal("Die Wahl findet am zweiundzwanzigsten November zweitausendsechsundzwanzig statt.");
    expect(de("Berlin, 22. November 2026. Der Gipfel beginnt.")).to.equal("Berlin, zweiundzwanzigster November zweitausendsechsundzwanzig. Der Gipfel beginnt.");
    expect(de("Die Frist läuft bis zum 3.10. und ab 2026-11-22 gilt das Gesetz.")).to.equal(
      "Die Frist läuft bis zum dritten Oktober und ab zweiundzwanzigsten November zweitausendsechsundzwanzig gilt das Gesetz.",
    );
    expect(de("Vom 5. Jan. bis 11/22/2026.")).to.equal("Vom fünften Januar bis zweiundzwanzigsten November zweitausendsechsundzwanzig.");
  });

  it("reads clock times", () => {
    expect(de("Die Sitzung beginnt um 14.30 Uhr, endet um 18 Uhr und der Zug fährt um 1:05.")).to.equal(
      "Die Sitzung beginnt um vierzehn Uhr dreißig, endet um achtzehn Uhr und der Zug fährt um ein Uhr fünf.",
    );
    expect(de("Anstoß ist um 20:45 Uhr.")).to.equal("Anstoß ist um zwanzig Uhr fünfundvierzig.");
  });

  it("reads money with symbols, codes, cents and scales", () => {
    expect(de("Ein Brötchen kostet 0,50 €, ein Kaffee 3,50 € und ein Menü €12,90.")).to.equal(
      "Ein Brötchen kostet fünfzig Cent, ein Kaffee drei Euro fünfzig und ein Menü zwölf Euro neunzig.",
    );
    expect(de("Der Fonds hat 2,5 Mrd. € und 1 Mio. Euro, die Aktie 10 EUR, der Franken 1 CHF, das Pfund 5 £ und 20,- €.")).to.equal(
      "Der Fonds hat zwei Komma fünf Milliarden Euro und eine Million Euro, die Aktie zehn Euro, der Franken ein Franken, das Pfund fünf Pfund und zwanzig Euro.",
    );
    expect(de("Das Paket kostet $5 bzw. 4,60 €.")).to.equal("Das Paket kostet fünf Dollar beziehungsweise vier Euro sechzig.");
  });

  it("reads percentages, units and ranges", () => {
    expect(de("Die Inflation lag bei 2,4 %, die Arbeitslosigkeit bei 5,9 Prozent.")).to.equal(
      "Die Inflation lag bei zwei Komma vier Prozent, die Arbeitslosigkeit bei fünf Komma neun Prozent.",
    );
    expect(de("Auf der A9 gilt 120 km/h, der Stau war 12 km lang, es hatte -3 °C und lag 1 kWh bei 30 Cent.")).to.equal(
      "Auf der A9 gilt einhundertzwanzig Kilometer pro Stunde, der Stau war zwölf Kilometer lang, es hatte minus drei Grad Celsius und lag eine Kilowattstunde bei dreißig Cent.",
    );
    expect(de("Man braucht 500 g Mehl, 1 kg Äpfel, 0,5 l Milch und 250 ml Sahne für 2 m² Blech.")).to.equal(
      "Man braucht fünfhundert Gramm Mehl, ein Kilogramm Äpfel, null Komma fünf Liter Milch und zweihundertfünfzig Milliliter Sahne für zwei Quadratmeter Blech.",
    );
    expect(de("Es werden 10–20 cm Neuschnee erwartet; Bayern siegte 3:1 und das Spiel endete 2-0.")).to.equal(
      "Es werden zehn bis zwanzig Zentimeter Neuschnee erwartet; Bayern siegte drei zu eins und das Spiel endete zwei zu null.",
    );
  });

  it("reads phone numbers digit by digit", () => {
    expect(de("Hinweise unter Tel. 030 4664 4664 oder +49 89 123456.")).to.equal(
      "Hinweise unter Telefon null drei null, vier sechs sechs vier, vier sechs sechs vier oder plus vier neun, acht neun, eins zwei drei vier fünf sechs.",
    );
  });

  it("expands common abbreviations", () => {
    expect(de("Das gilt z. B. für Mieter, d. h. für ca. 40 % der Haushalte, bzw. Eigentümer usw. Dann sprach Prof. Dr. med. Anna Roth.")).to.equal(
      "Das gilt zum Beispiel für Mieter, das heißt für circa vierzig Prozent der Haushalte, beziehungsweise Eigentümer und so weiter. Dann sprach Professor Doktor der Medizin Anna Roth.",
    );
    expect(de("Laut § 5 Abs. 2 und Art. 3 ist die Zahlung am Mo., 5. Okt. 2026 fällig.")).to.equal(
      "Laut Paragraf fünf Absatz zwei und Artikel drei ist die Zahlung am Montag, fünften Oktober zweitausendsechsundzwanzig fällig.",
    );
    expect(de("Die Praxis liegt in der Hauptstr. 5, Nr. 12 ist die Str. daneben.")).to.equal(
      "Die Praxis liegt in der Hauptstraße fünf, Nummer zwölf ist die Straße daneben.",
    );
  });

  it("reads web and mail addresses by their host with Punkt", () => {
    expect(de("Mehr unter https://www.tagesschau.de/inland/wahl-100.html oder per Mail an max.mustermann@beispiel.de.")).to.equal(
      "Mehr unter tagesschau Punkt de oder per Mail an max Punkt mustermann at beispiel Punkt de.",
    );
  });

  it("reads roman numerals where the context is clear", () => {
    expect(de("Papst Leo XIV. besuchte Kapitel IV der Akten. König Karl III. sprach.")).to.equal(
      "Papst Leo der Vierzehnte besuchte Kapitel vier der Akten. König Karl der Dritte sprach.",
    );
  });
});

describe("speech normalisation: safety", () => {
  it("leaves text it does not recognise as written", () => {
    const odd = "Version 3.4.1 of the Boeing 737-800X, ratio 1234/5678, code A4B-7C and 99.9.9 stay.";
    const once = en(odd);
    expect(once).to.contain("3.4.1");
    expect(once).to.contain("1234/5678");
    expect(once).to.contain("99.9.9");
    expect(once).to.contain("A4B-7C");
    expect(once).to.contain("737-800X");
    // German notation in English text and the other way round is not misread as a thousands separator.
    expect(en("It weighed 1,5 tons.")).to.equal("It weighed 1,5 tons.");
    expect(de("Das Update 3.5 kam.")).to.equal("Das Update 3.5 kam.");
  });

  it("rejects impossible dates and times instead of inventing them", () => {
    expect(en("Code 13/45/2026 and 25:99 stay.")).to.equal("Code 13/45/2026 and 25:99 stay.");
    expect(de("Die Nummer 45.13.2026 bleibt.")).to.equal("Die Nummer 45.13.2026 bleibt.");
  });

  it("does not touch letters that look like units when no number precedes them", () => {
    expect(en("I saw a g and an m in the km list.")).to.equal("I saw a g and an m in the km list.");
  });

  it("isRaw only collapses whitespace", () => {
    const paras = prepareText({ title: "  Dr.   Who  ", text: "Dr. Smith paid  $3.50\ton 11/22/2026 at www.example.com.\n\n  Next   one.  ", lang: "en-US", isRaw: true });
    expect(paras).to.deep.equal(["Dr. Who", "Dr. Smith paid $3.50 on 11/22/2026 at www.example.com.", "Next one."]);
  });
});

describe("sentence splitting per language", () => {
  it("keeps Dr., decimals, URLs and mail addresses inside their sentence (en)", () => {
    expect(splitSentences("Dr. Smith paid 3.5 million. Mail jane.doe@example.com. See www.example.com/a.b for more. Mr. Brown agreed!", "en-US")).to.deep.equal([
      "Dr. Smith paid 3.5 million.",
      "Mail jane.doe@example.com.",
      "See www.example.com/a.b for more.",
      "Mr. Brown agreed!",
    ]);
  });

  it("keeps z. B., Dr. med. and date ordinals inside their sentence (de)", () => {
    expect(splitSentences("Dr. med. Roth kam am 3. Oktober. Das gilt z. B. für Mieter. Siehe beispiel.de/a.b dazu. Fertig?", "de-DE")).to.deep.equal([
      "Dr. med. Roth kam am 3. Oktober.",
      "Das gilt z. B. für Mieter.",
      "Siehe beispiel.de/a.b dazu.",
      "Fertig?",
    ]);
  });

  it("splits normalised text at the sentence ends that remain", () => {
    const [, body] = prepareText({ title: "T", text: "Prof. Dr. Roth sagte, z. B. 3,5 % seien genug. Danach kam Dr. med. Lang.", lang: "de-DE" });
    expect(splitSentences(body, "de-DE")).to.deep.equal(["Professor Doktor Roth sagte, zum Beispiel drei Komma fünf Prozent seien genug.", "Danach kam Doktor der Medizin Lang."]);
  });
});
