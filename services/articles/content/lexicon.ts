// Cue lists for the content-type classifier (see docs/content-types.md).
// A cue is [pattern, weight]. Patterns are lower case and match whole words;
// text and patterns are split into words at anything that is not a letter or
// digit, so "kick-off" also matches "kick off" and punctuation is ignored:
//   "world cup"  phrase: consecutive words
//   "teilte * mit"  "*" alone stands for any one word
//   "olympi*"    word starting with "olympi" (olympics, Olympiasieger)
//   "*gewinn"    word ending with "gewinn" (Quartalsgewinn), for German compounds
// RegExp cues run on the original text (case and line breaks intact) and
// carry structural signals such as a "Pressekontakt" line or an "About X" heading.
// Weights: 3 = decisive alone, 1.5-2.5 = strong, 0.5-1 = supporting.

export type Cue = [pattern: string | RegExp, weight: number];
export type Lexicon = Record<string, Cue[]>;

export const TOPICAL = new Set(["news", "sports", "business", "culture", "science"]);

const en: Lexicon = {
  news: [
    ["according to", 1], ["said", 0.5], ["told reporters", 1.5], ["officials said", 1.5], ["police", 1], ["government", 0.75],
    ["minister", 0.75], ["spokesperson", 1], ["spokesman", 1], ["spokeswoman", 1], ["authorities", 1], ["investigation", 0.75],
    ["on monday", 0.75], ["on tuesday", 0.75], ["on wednesday", 0.75], ["on thursday", 0.75], ["on friday", 0.75],
    ["on saturday", 0.75], ["on sunday", 0.75], ["reuters", 1.5], ["associated press", 1.5], ["breaking", 1], ["election", 1],
    ["parliament", 1], ["court", 0.75], ["council", 0.5], ["statement", 0.5], ["residents", 0.75], ["officials", 1],
    [/^[A-Z][A-Za-z .'-]{1,40}\s?\((?:AP|Reuters|AFP|dpa)\)\s?[-—–]/m, 2.5],
  ],
  sports: [
    ["match", 1], ["goal*", 1], ["scored", 1.5], ["coach", 1], ["league", 1.5], ["championship*", 1.5], ["tournament", 1.5],
    ["season", 0.75], ["striker", 2], ["midfielder", 2], ["defender", 1], ["referee", 1.5], ["penalty", 1], ["kick-off", 1.5],
    ["final whistle", 2], ["victory", 0.75], ["defeat", 0.75], ["olympi*", 1.5], ["world cup", 2], ["premier league", 2],
    ["champions league", 2], ["nba", 2], ["nfl", 2], ["transfer window", 2], ["fans", 0.75], ["stadium", 1.5], ["tennis", 1.5],
    ["football", 1.5], ["soccer", 1.5], ["basketball", 1.5], ["marathon", 1], ["grand prix", 2], ["squad", 1.5],
    ["half-time", 1.5], ["quarter-final*", 1.5], ["semi-final*", 1.5], ["athlete*", 1.5], ["title race", 1.5], ["relegation", 2],
  ],
  business: [
    ["revenue*", 1.5], ["profit*", 1.5], ["shares", 1.5], ["stock market", 1.5], ["investor*", 1.5], ["market*", 0.75],
    ["quarterly", 1.5], ["fiscal", 1], ["earnings", 1.5], ["ceo", 1.5], ["chief executive", 1.5], ["company", 0.5],
    ["billion", 0.75], ["million", 0.5], ["inflation", 1.5], ["interest rate*", 1.5], ["central bank", 1.5], ["economy", 1.5],
    ["economic", 1], ["sales", 1], ["merger", 2], ["acquisition", 1.5], ["ipo", 2], ["dividend*", 2], ["startup*", 1],
    ["industry", 0.75], ["layoffs", 1.5], ["wall street", 2], ["nasdaq", 2], ["dow jones", 2], ["gdp", 1.5], ["exports", 1],
    ["supply chain*", 1], ["analysts", 1], ["forecast", 0.75], ["percent", 0.5],
  ],
  culture: [
    ["film*", 1], ["movie*", 1], ["album", 1.5], ["concert*", 1.5], ["exhibition*", 1.5], ["museum*", 1.5], ["gallery", 1],
    ["novel*", 1.5], ["author", 0.75], ["theatre", 1.5], ["theater", 1.5], ["opera", 1.5], ["festival", 1], ["premiere*", 1.5],
    ["artist*", 1], ["painting*", 1], ["singer", 1.5], ["musician*", 1.5], ["orchestra", 1.5], ["audience*", 0.75], ["actor*", 1.5],
    ["actress*", 1.5], ["cinema*", 1.5], ["poet*", 1.5], ["literary", 1.5], ["oscar*", 1.5], ["grammy", 1.5], ["documentary", 1],
    ["sculpture*", 1.5], ["choreograph*", 1.5], ["ballet", 1.5], ["curator*", 1.5], ["director", 0.75], ["stage", 0.5],
  ],
  science: [
    ["study", 1], ["researchers", 1.5], ["research", 1], ["scientist*", 1.5], ["scientific", 1], ["journal", 1],
    ["published in", 1], ["university", 0.75], ["experiment*", 1.5], ["species", 1.5], ["climate", 1], ["physic*", 1.5],
    ["biolog*", 1.5], ["chemist*", 1.5], ["astronom*", 1.5], ["nasa", 1.5], ["telescope*", 1.5], ["genetic*", 1.5],
    ["gene*", 1], ["cells", 1], ["molecul*", 1.5], ["hypothes*", 1.5], ["peer-reviewed", 2], ["laborator*", 1], ["findings", 1.5],
    ["particle*", 1], ["evolution*", 1], ["fossil*", 1.5], ["planet*", 1], ["vaccine*", 1], ["clinical trial*", 1.5], ["data", 0.5],
  ],
  opinion: [
    ["i think", 2], ["i believe", 2], ["in my view", 2.5], ["in my opinion", 2.5], ["i would argue", 2.5], ["it seems to me", 2],
    ["to my mind", 2], ["i am convinced", 2], ["i'm convinced", 2], ["i disagree", 2], ["frankly", 1], ["we should", 1],
    ["we must", 1], ["it is time", 1], ["op-ed", 3], ["commentary", 1.5], ["editorial", 1.5], ["columnist", 1.5],
    ["let's be honest", 1.5], ["absurd", 1], ["shameful", 1],
    [/^\s*(?:opinion|comment|commentary|column|editorial|op-ed)\s*[:|]/im, 2.5],
  ],
  press_release: [
    ["for immediate release", 3], ["press release", 2], ["media contact*", 3], ["press contact*", 3], ["media inquiries", 2.5],
    ["announced today", 2], ["today announced", 2], ["is pleased to announce", 2.5], ["is proud to announce", 2.5],
    ["is excited to announce", 2.5], ["leading provider of", 2], ["forward-looking statements", 2], ["prnewswire", 3],
    ["business wire", 3], ["globe newswire", 3], ["headquartered in", 1], ["for more information, visit", 1.5],
    [/\((?:NASDAQ|NYSE|LSE|XETRA):\s?[A-Z.]{1,6}\)/, 2], [/^\s*#{3}\s*$/m, 1.5], [/^\s*About [A-Z][\w&.,'’ -]{1,60}\s*$/m, 2.5],
  ],
  advertorial: [
    ["sponsored", 1], ["paid post", 3], ["paid content", 3], ["advertorial", 3], ["advertisement", 0.75],
    ["in partnership with", 2], ["presented by", 1.5], ["brought to you by", 2], ["promo code", 2], ["discount code", 2],
    ["use code", 1.5], ["order now", 1.5], ["shop now", 1.5], ["buy now", 1.5], ["limited-time offer", 2],
    ["limited time offer", 2], ["free shipping", 1.5], ["affiliate", 1.5], ["we may earn a commission", 2.5],
    ["exclusive offer", 1.5], ["click here", 1], [/\b\d{1,2}\s?% off\b/i, 1.5],
    [/^\s*(?:sponsored|sponsored content|sponsored by [^\n]{1,60}|advertisement|paid partnership)\s*$/im, 3],
  ],
};

const de: Lexicon = {
  news: [
    ["laut", 0.75], ["sagte", 0.5], ["teilte mit", 1.5], ["teilte * mit", 1.5], ["polizei*", 1], ["regierung", 0.75],
    ["minister*", 0.75], ["sprecher*", 1], ["behörde*", 1], ["ermittlung*", 0.75], ["am montag", 0.75], ["am dienstag", 0.75],
    ["am mittwoch", 0.75], ["am donnerstag", 0.75], ["am freitag", 0.75], ["am samstag", 0.75], ["am sonntag", 0.75],
    ["dienstagabend", 0.75], ["montagabend", 0.75], ["dpa", 1.5], ["reuters", 1.5], ["afp", 1], ["wahl", 1], ["bundestag", 1],
    ["landtag", 1], ["gericht*", 0.75], ["gemeinderat", 0.75], ["stadtrat", 0.75], ["bürgermeister*", 0.75], ["angaben", 1],
    [/^[A-ZÄÖÜ][\wäöüß .'-]{1,40}\s?\((?:dpa|AFP|Reuters|epd|KNA)\)\s?[-—–]/m, 2.5],
  ],
  sports: [
    ["spiel", 0.75], ["tor", 1], ["tore", 1], ["treffer", 1.5], ["trainer*", 1], ["bundesliga*", 2], ["liga", 1],
    ["meisterschaft", 1.5], ["turnier*", 1.5], ["saison", 1], ["stürmer*", 2], ["mittelfeld*", 1.5], ["abwehr", 0.75],
    ["schiedsrichter*", 2], ["elfmeter", 2], ["anpfiff", 2], ["abpfiff", 2], ["halbzeit", 1.5], ["sieg", 0.75],
    ["niederlage", 0.75], ["olympi*", 1.5], ["weltmeister*", 1.5], ["europameister*", 1.5], ["fußball*", 1.5], ["tennis", 1.5],
    ["handball*", 1.5], ["stadion", 1.5], ["fans", 0.75], ["mannschaft", 1], ["kader", 1], ["tabellen*", 1], ["pokal*", 1.5],
    ["dfb", 1.5], ["champions league", 2], ["athlet*", 1.5], ["formel 1", 2], ["abstieg*", 1.5], ["spieltag", 2],
  ],
  business: [
    ["*umsatz", 1.5], ["umsätze", 1.5], ["*gewinn", 1.5], ["aktie*", 1.5], ["aktionär*", 1.5], ["anleger", 1.5], ["börse*", 1.5],
    ["konzern*", 1.5], ["unternehmen*", 0.75], ["milliarden", 0.75], ["millionen", 0.5], ["inflation*", 1.5], ["leitzins*", 2],
    ["zinsen", 1], ["ezb", 1.5], ["wirtschaft*", 1], ["quartal*", 1.5], ["vorstand*", 1], ["geschäftsführer*", 1],
    ["übernahme", 1.5], ["fusion", 1.5], ["dividende", 2], ["bilanz", 1.5], ["prozent", 0.5], ["stellenabbau", 1.5], ["dax", 2],
    ["export*", 1], ["konjunktur*", 2], ["start-up*", 1], ["investor*", 1.5], ["analysten", 1], ["prognose", 0.75],
  ],
  culture: [
    ["film*", 1], ["kino*", 1.5], ["regisseur*", 1.5], ["album", 1.5], ["konzert*", 1.5], ["ausstellung*", 1.5], ["museum*", 1.5],
    ["galerie", 1], ["roman", 1.5], ["autorin", 1], ["autor", 0.75], ["theater*", 1.5], ["oper", 1.5], ["festival", 1],
    ["premiere", 1.5], ["künstler*", 1.5], ["gemälde", 1.5], ["sänger*", 1.5], ["musiker*", 1.5], ["orchester", 1.5],
    ["bühne*", 1], ["publikum", 0.75], ["schauspieler*", 1.5], ["lesung", 1.5], ["lyrik", 1.5], ["dichter*", 1.5],
    ["literatur*", 1.5], ["kultur*", 1], ["inszenierung", 2], ["ballett", 1.5], ["kurator*", 1.5], ["kunst*", 1],
    ["berlinale", 2], ["vernissage", 2], ["ateliers", 1],
  ],
  science: [
    ["studie*", 1.5], ["forscher*", 1.5], ["forschung*", 1], ["wissenschaft*", 1.5], ["fachjournal", 2], ["fachzeitschrift*", 2],
    ["veröffentlicht", 0.5], ["universität*", 0.75], ["experiment*", 1.5], ["daten", 0.5], ["arten", 1], ["klima*", 1],
    ["physik*", 1.5], ["biolog*", 1.5], ["chemi*", 1.5], ["astronom*", 1.5], ["teleskop*", 1.5], ["genetisch*", 1.5],
    ["zellen", 1], ["molekül*", 1.5], ["hypothese", 1.5], ["labor*", 1], ["ergebnisse", 0.75], ["erkenntnis*", 1],
    ["teilchen", 1.5], ["evolution", 1], ["fossil*", 1.5], ["planet*", 1], ["impfstoff*", 1], ["max-planck*", 2],
    ["fraunhofer*", 1.5], ["institut*", 0.75],
  ],
  opinion: [
    ["meiner meinung nach", 2.5], ["ich finde", 2], ["ich glaube", 2], ["meines erachtens", 2.5], ["aus meiner sicht", 2.5],
    ["ich bin überzeugt", 2], ["wir sollten", 1], ["wir müssen", 1], ["es ist zeit", 1], ["es wird zeit", 1],
    ["leitartikel", 2.5], ["gastbeitrag", 2], ["kolumne", 2], ["ehrlich gesagt", 1.5], ["absurd", 1], ["skandal*", 1],
    [/^\s*(?:kommentar|meinung|kolumne|leitartikel|gastbeitrag|standpunkt)\s*[:|]/im, 2.5],
  ],
  press_release: [
    ["pressemitteilung", 3], ["pressekontakt", 3], ["für rückfragen", 2.5], ["ansprechpartner*", 1.5], ["pressestelle", 2],
    ["gab heute bekannt", 2], ["gibt heute bekannt", 2], ["freut sich, bekannt zu geben", 2.5], ["freut sich bekanntzugeben", 2.5],
    ["presseportal", 2], ["führender anbieter", 2], ["weitere informationen unter", 1.5], ["sperrfrist", 2],
    ["mit sitz in", 1], ["hat seinen sitz in", 1], [/\(ots\)/i, 3], [/^\s*Über [A-ZÄÖÜ][\wäöüß&.,'’ -]{1,60}\s*$/m, 2.5],
  ],
  advertorial: [
    ["anzeige", 0.75], ["werbung", 1], ["gesponsert", 3], ["sponsored", 1], ["advertorial", 3], ["in kooperation mit", 2],
    ["präsentiert von", 1.5], ["rabattcode", 2], ["gutscheincode", 2], ["gutschein*", 1], ["jetzt bestellen", 1.5],
    ["jetzt kaufen", 1.5], ["jetzt sichern", 1.5], ["nur für kurze zeit", 2], ["versandkostenfrei", 1.5], ["affiliate", 1.5],
    ["provision", 1], ["exklusives angebot", 1.5], ["bezahlte partnerschaft", 3], ["produktplatzierung", 2.5],
    [/\b\d{1,2}\s?% rabatt\b/i, 1.5],
    [/^\s*[-–—]?\s*(?:anzeige|werbung|sponsored|gesponserter beitrag)\s*[-–—:]?\s*$/im, 3],
  ],
};

export const LEXICONS: Record<string, Lexicon> = { en, de };

/** Pronouns counted (outside quotations) for the first-person cue of opinion pieces. */
export const FIRST_PERSON: Record<string, ReadonlySet<string>> = {
  en: new Set(["i", "me", "my", "myself"]),
  de: new Set(["ich", "mir", "mich", "mein", "meine", "meiner", "meinen", "meinem", "meines"]),
};
