// Hand-written sample articles for the classifier tests. Each names the type
// it must be detected as.
export interface Sample {
  expect: string;
  lang: "en" | "de";
  title: string;
  text: string;
}

export const SAMPLES: Sample[] = [
  // ---------- news ----------
  {
    expect: "news",
    lang: "en",
    title: "Bridge closed after lorry strikes support pillar",
    text: `The Riverside Bridge was closed to traffic on Wednesday after a lorry struck one of its support pillars, police said.

No one was injured, according to a spokesperson for the county police. Officials said engineers would inspect the structure on Thursday before deciding when it could reopen.

Residents told reporters that queues stretched back more than a mile during the evening rush hour. The council said in a statement that diversions would remain in place until further notice, and an investigation into the cause of the crash has begun.`,
  },
  {
    expect: "news",
    lang: "en",
    title: "Government survives confidence vote",
    text: `LONDON (Reuters) — The government survived a confidence vote in parliament on Tuesday by a margin of 14 votes, ending a week of uncertainty.

The prime minister told reporters afterwards that the result showed the coalition could still govern. Opposition leaders said they would continue to press for an early election.

According to officials, three members of the governing party abstained. The minister for housing said on Monday she would resign if the vote had been lost.`,
  },
  {
    expect: "news",
    lang: "de",
    title: "Brand in Lagerhalle: Polizei ermittelt",
    text: `In einer Lagerhalle im Gewerbegebiet Nord ist am Montagabend ein Feuer ausgebrochen. Verletzt wurde nach Angaben der Polizei niemand.

Ein Sprecher der Feuerwehr sagte, die Flammen seien gegen 21 Uhr bemerkt worden. Die Behörden schätzen den Schaden auf mehrere Hunderttausend Euro.

Die Polizei hat Ermittlungen zur Brandursache aufgenommen. Laut einem Sprecher kann Brandstiftung derzeit nicht ausgeschlossen werden. Die Kriminalpolizei teilte mit, Zeugen sollten sich melden.`,
  },
  {
    expect: "news",
    lang: "de",
    title: "Landtag beschließt neues Schulgesetz",
    text: `Berlin (dpa) - Der Landtag hat am Donnerstag mit den Stimmen der Regierungsfraktionen ein neues Schulgesetz beschlossen.

Die Ministerin sagte in der Debatte, das Gesetz schaffe mehr Lehrerstellen an Grundschulen. Die Opposition kündigte an, vor Gericht dagegen vorzugehen.

Nach Angaben des Ministeriums sollen die Regelungen zum kommenden Schuljahr gelten. Ein Sprecher der Lehrergewerkschaft teilte mit, man begrüße die Pläne grundsätzlich.`,
  },
  // ---------- opinion ----------
  {
    expect: "opinion",
    lang: "en",
    title: "Opinion: Our towns need fewer car parks, not more",
    text: `I have lived in this town for twenty years, and I think the council has got its priorities badly wrong.

In my view, every new car park is an invitation to drive a distance that could be walked. I believe we should be spending that money on safe cycle lanes and better buses instead. Frankly, the argument that shops will die without parking has been disproved in city after city.

It is time we stopped designing our high streets around cars. I would argue that the people who will thank us most are the children who can finally walk to school on their own.`,
  },
  {
    expect: "opinion",
    lang: "en",
    title: "Why I stopped grading homework",
    text: `For ten years I marked every piece of homework my pupils handed in. Last September I stopped, and I am convinced it was the best decision of my career.

It seems to me that grades on homework measure little more than which families have time to help. My pupils now get comments instead of numbers, and I have seen more of them actually read what I write.

Some colleagues think I am being naive. I disagree. We must be honest about what homework is for, and in my opinion it is for practice, not for judgement.`,
  },
  {
    expect: "opinion",
    lang: "de",
    title: "Kommentar: Die Innenstadt braucht mehr Grün",
    text: `Ich wohne seit fünfzehn Jahren in dieser Stadt, und ich finde, dass der Stadtrat die falschen Prioritäten setzt.

Meiner Meinung nach ist jeder neue Parkplatz eine Einladung, Wege mit dem Auto zurückzulegen, die man auch zu Fuß gehen könnte. Ich glaube, wir sollten das Geld lieber in Bäume und Radwege stecken.

Ehrlich gesagt halte ich das Argument, der Handel gehe ohne Parkplätze zugrunde, für widerlegt. Es wird Zeit, dass wir unsere Innenstädte für Menschen planen und nicht für Autos.`,
  },
  {
    expect: "opinion",
    lang: "de",
    title: "Warum ich keine Hausaufgaben mehr benote",
    text: `Zehn Jahre lang habe ich jede Hausaufgabe benotet. Seit dem letzten Herbst tue ich das nicht mehr, und ich bin überzeugt, dass es richtig war.

Aus meiner Sicht messen Noten auf Hausaufgaben vor allem, welche Eltern Zeit zum Helfen haben. Meine Schülerinnen und Schüler bekommen jetzt Rückmeldungen statt Zahlen, und mir fällt auf, dass sie diese tatsächlich lesen.

Manche Kollegen halten mich für naiv. Meines Erachtens müssen wir ehrlich fragen, wozu Hausaufgaben da sind: zum Üben, nicht zum Urteilen.`,
  },
  // ---------- sports ----------
  {
    expect: "sports",
    lang: "en",
    title: "Late penalty keeps Rovers in the title race",
    text: `Rovers kept their title hopes alive with a 2-1 victory over City, their striker scoring from the penalty spot four minutes from time.

City had taken the lead before half-time when their midfielder scored with a low shot. The coach made two changes at the break, and Rovers equalised through a header from a corner.

The referee pointed to the spot after a defender handled in the area. The win lifts Rovers to second in the league, two points behind the leaders with three matches of the season left. The home fans celebrated long after the final whistle.`,
  },
  {
    expect: "sports",
    lang: "en",
    title: "Okafor wins marathon gold in record time",
    text: `Grace Okafor won the women's marathon at the championships on Sunday, breaking the course record by more than a minute.

The 27-year-old athlete pulled away from the leading group after 30 kilometres and crossed the line in the stadium to a standing ovation. It is her first major title since the Olympics three years ago.

Her coach said the victory was the result of a season built entirely around this race. The tournament continues on Monday with the men's 10,000 metres final.`,
  },
  {
    expect: "sports",
    lang: "de",
    title: "Elfmeter in der Nachspielzeit: Eintracht gewinnt Derby",
    text: `Die Eintracht hat das Derby mit 2:1 gewonnen. Der Stürmer verwandelte in der Nachspielzeit einen Elfmeter zum Siegtreffer.

Die Gäste waren kurz vor der Halbzeit durch einen Treffer aus dem Mittelfeld in Führung gegangen. Der Trainer wechselte zur Pause zweimal, und nach einer Ecke fiel der Ausgleich per Kopfball.

Der Schiedsrichter zeigte nach einem Handspiel in der Abwehr auf den Punkt. Mit dem Sieg springt die Mannschaft auf Platz drei der Tabelle. Die Fans feierten noch lange nach dem Abpfiff im Stadion.`,
  },
  {
    expect: "sports",
    lang: "de",
    title: "Handball: Titelverteidiger scheidet im Pokal aus",
    text: `Der Titelverteidiger ist im Viertelfinale des Pokals überraschend ausgeschieden. Die Mannschaft verlor das Spiel beim Zweitligisten mit 27:29.

Nach einer ausgeglichenen ersten Halbzeit setzten sich die Gastgeber in den letzten zehn Minuten ab. Der Trainer haderte nach dem Spiel mit der Chancenverwertung seiner Spieler.

In der Liga steht das Team weiterhin an der Tabellenspitze. Am nächsten Spieltag wartet der Tabellenzweite. Für die Saison bleibt damit nur noch die Meisterschaft als Ziel.`,
  },
  // ---------- business ----------
  {
    expect: "business",
    lang: "en",
    title: "Northwind profit falls as sales slow",
    text: `Northwind Logistics reported a 12 percent fall in quarterly profit on Thursday as sales in its European business slowed.

Revenue for the three months to June was 3.4 billion dollars, slightly below what analysts had expected. The chief executive said the company would cut costs and delay two warehouse projects.

Shares fell 6 percent in early trading on Wall Street. Investors are also watching for the central bank's next interest rate decision, which could weigh further on consumer demand and the wider economy.`,
  },
  {
    expect: "business",
    lang: "en",
    title: "Chipmaker agrees merger with rival",
    text: `Two of the largest European chipmakers have agreed a merger that would create a company worth about 40 billion euros.

The acquisition, paid mostly in shares, is expected to close next year if regulators approve. The CEO of the combined group said the deal would secure supply chains for carmakers and reduce costs.

Investors welcomed the news, sending the stock up 9 percent. Analysts said the market for industrial chips had been hit by weak exports and high inflation, and that a dividend increase was unlikely before the integration is complete.`,
  },
  {
    expect: "business",
    lang: "de",
    title: "Maschinenbauer senkt Prognose nach schwachem Quartal",
    text: `Der Maschinenbauer Hartmann hat nach einem schwachen zweiten Quartal seine Prognose für das Gesamtjahr gesenkt. Der Umsatz ging um acht Prozent auf 1,2 Milliarden Euro zurück.

Der Vorstand begründete den Rückgang mit der schwachen Konjunktur in China und hohen Energiekosten. Der Quartalsgewinn halbierte sich nahezu.

Die Aktie verlor an der Börse zeitweise mehr als sieben Prozent. Analysten rechnen damit, dass der Konzern die Dividende kürzen muss. Auch ein Stellenabbau in der Verwaltung werde geprüft, hieß es aus dem Unternehmen.`,
  },
  {
    expect: "business",
    lang: "de",
    title: "EZB erhöht Leitzins erneut",
    text: `Die Europäische Zentralbank hat den Leitzins um weitere 0,25 Prozentpunkte angehoben. Die EZB reagiert damit auf die anhaltend hohe Inflation im Euroraum.

Ökonomen erwarten, dass die höheren Zinsen die Wirtschaft weiter bremsen. Anleger an der Börse reagierten gelassen, der Dax schloss leicht im Plus.

Für Unternehmen werden Kredite damit erneut teurer. Der Export, lange eine Stütze der deutschen Konjunktur, schwächelt bereits seit Monaten.`,
  },
  // ---------- culture ----------
  {
    expect: "culture",
    lang: "en",
    title: "A quiet triumph at the opera house",
    text: `The new production of the opera opened on Friday to a full house, and the audience rose to its feet at the final curtain.

The director has moved the story to a seaside town in the 1950s, and the stage design by the artist Lena Varga is full of faded colour. The orchestra played with real warmth under its young conductor.

The premiere also marked the debut of the singer Tomas Reyes in the lead role. The production runs until the end of the festival season, and a film of the performance will be shown in cinemas in the spring.`,
  },
  {
    expect: "culture",
    lang: "en",
    title: "Exhibition review: the painter who loved the fog",
    text: `The museum's new exhibition brings together sixty paintings by an artist who spent her life painting the harbour in fog.

The curator has hung the works in the order they were made, so the gallery walk becomes a slow lesson in how her brushwork loosened over forty years. A short documentary in the last room shows her at work in her studio.

Alongside the paintings are letters to a novelist friend and early sketches for a sculpture that was never finished. It is the most moving show in the city this year.`,
  },
  {
    expect: "culture",
    lang: "de",
    title: "Umjubelte Premiere am Stadttheater",
    text: `Mit langem Applaus hat das Publikum am Samstag die Premiere der neuen Inszenierung am Stadttheater gefeiert.

Der Regisseur verlegt das Stück in ein Berliner Hinterhaus der Zwanzigerjahre. Die Bühne der Künstlerin Mara Feld wirkt dabei wie ein begehbares Gemälde. Das Orchester spielt unter seinem neuen Dirigenten mit großer Präzision.

Besonders die Sängerin in der Hauptrolle überzeugt. Die Oper ist bis Ende Juni zu sehen, eine Aufzeichnung läuft im Herbst im Kino.`,
  },
  {
    expect: "culture",
    lang: "de",
    title: "Ausstellung: Die Malerin des Nebels",
    text: `Das Museum zeigt in einer großen Ausstellung sechzig Gemälde einer Künstlerin, die ihr Leben lang den Hafen im Nebel gemalt hat.

Die Kuratorin hat die Werke chronologisch gehängt. Der Rundgang durch die Galerie wird so zu einer Lektion darüber, wie sich ihr Pinselstrich über vierzig Jahre löste.

Ergänzt wird die Schau durch Briefe an einen befreundeten Dichter und eine Lesung aus seinem letzten Roman. Es ist die berührendste Kunstausstellung des Jahres.`,
  },
  // ---------- science ----------
  {
    expect: "science",
    lang: "en",
    title: "Deep-sea fish species glows to hunt, study finds",
    text: `A species of deep-sea fish uses light from bacteria in its cheeks to hunt, according to a study published in the journal Marine Biology.

The researchers filmed the fish at depths of 800 metres and then examined its cells in the laboratory. Genetic analysis showed that the bacteria are passed from parent to offspring.

The findings support a hypothesis that such partnerships evolved several times in the deep ocean, the scientists said. The university team now plans experiments to measure how much light the fish can produce.`,
  },
  {
    expect: "science",
    lang: "en",
    title: "Telescope spots water vapour on distant planet",
    text: `Astronomers using a space telescope have detected water vapour in the atmosphere of a planet 120 light years from Earth.

The research, published in a peer-reviewed journal this week, is based on data collected as the planet passed in front of its star. The scientists say the molecule's signature is the clearest yet found on a planet of this size.

The findings do not mean the planet can support life, the researchers cautioned, but they add to evidence that such worlds are common. NASA plans further observations next year.`,
  },
  {
    expect: "science",
    lang: "de",
    title: "Forscher entdecken neue Tiefseefisch-Art",
    text: `Forscherinnen und Forscher haben im Atlantik eine bisher unbekannte Art von Tiefseefischen entdeckt, die mit Hilfe von Bakterien leuchtet.

Das Team der Universität Kiel filmte die Tiere in 800 Metern Tiefe und untersuchte ihre Zellen anschließend im Labor. Die Studie ist im Fachjournal „Marine Biology" erschienen.

Genetische Analysen zeigen, dass die Bakterien von den Eltern an den Nachwuchs weitergegeben werden. Die Ergebnisse stützen die Hypothese, dass solche Partnerschaften in der Tiefsee mehrfach entstanden sind.`,
  },
  {
    expect: "science",
    lang: "de",
    title: "Teleskop findet Wasserdampf auf fernem Planeten",
    text: `Astronomen haben mit einem Weltraumteleskop Wasserdampf in der Atmosphäre eines Planeten nachgewiesen, der 120 Lichtjahre von der Erde entfernt ist.

Die Studie eines Teams vom Max-Planck-Institut für Astronomie erschien in einer Fachzeitschrift. Die Daten wurden gesammelt, als der Planet vor seinem Stern vorbeizog.

Die Wissenschaftler betonen, dass die Erkenntnisse nicht bedeuten, dass auf dem Planeten Leben möglich ist. Die Forschung zeige aber, dass solche Welten häufig sein könnten.`,
  },
  // ---------- press_release ----------
  {
    expect: "press_release",
    lang: "en",
    title: "Brightwave Energy announces new battery plant in Ohio",
    text: `FOR IMMEDIATE RELEASE

COLUMBUS, Ohio — Brightwave Energy, a leading provider of grid-scale storage systems, today announced plans to build a battery manufacturing plant near Columbus, creating 600 jobs.

"We are proud to bring advanced manufacturing to Ohio," said Dana Miles, CEO of Brightwave Energy.

About Brightwave Energy
Brightwave Energy is headquartered in Austin, Texas and designs storage systems for utilities. For more information, visit www.brightwave.example.

Media Contact
Sam Lee, press@brightwave.example

###`,
  },
  {
    expect: "press_release",
    lang: "en",
    title: "Kettle & Co. is pleased to announce the opening of its 50th store",
    text: `Kettle & Co. is pleased to announce the opening of its 50th store in Leeds on 1 June. The new shop will stock the company's full range of teas and offer tasting sessions every weekend.

"Reaching fifty stores is a milestone for our whole team," said founder Priya Shah.

About Kettle & Co.
Founded in 2009, Kettle & Co. sells loose-leaf teas in 50 stores across the UK.

Press contact: Jo Ward, +44 20 7946 0000, press@kettle.example`,
  },
  {
    expect: "press_release",
    lang: "de",
    title: "Pressemitteilung: Stadtwerke Lindenau starten Solarprogramm",
    text: `Lindenau (ots) - Die Stadtwerke Lindenau gaben heute bekannt, ab Juli ein Förderprogramm für Solaranlagen auf Mehrfamilienhäusern zu starten. Insgesamt stehen zwei Millionen Euro bereit.

„Wir wollen die Energiewende vor Ort beschleunigen", sagt Geschäftsführerin Karin Voss.

Über die Stadtwerke Lindenau
Die Stadtwerke Lindenau versorgen rund 80.000 Haushalte mit Strom, Gas und Wasser und haben ihren Sitz in Lindenau.

Pressekontakt:
Stadtwerke Lindenau, Pressestelle, presse@stadtwerke-lindenau.example`,
  },
  {
    expect: "press_release",
    lang: "de",
    title: "Nordlicht Software eröffnet Standort in Leipzig",
    text: `Die Nordlicht Software GmbH, ein führender Anbieter von Planungssoftware für Kliniken, freut sich, bekannt zu geben, dass sie zum 1. September einen neuen Standort in Leipzig eröffnet. Dort sollen bis Ende des Jahres 40 neue Arbeitsplätze entstehen.

Über Nordlicht Software
Die Nordlicht Software GmbH mit Sitz in Hamburg entwickelt seit 2012 Software für Krankenhäuser. Weitere Informationen unter www.nordlicht.example.

Für Rückfragen:
Lena Brandt, Unternehmenskommunikation, Telefon 040 123456`,
  },
  // ---------- advertorial ----------
  {
    expect: "advertorial",
    lang: "en",
    title: "Five ways to sleep better this winter",
    text: `Sponsored content

Brought to you by DreamRest Mattresses.

Cold nights can make it hard to get a good night's sleep. Keeping your bedroom at a steady temperature, cutting down on screens before bed and choosing the right mattress all make a difference.

DreamRest's new hybrid mattress adapts to your body temperature through the night. For a limited time offer, readers get 20% off with promo code SLEEPWELL, plus free shipping. Order now at dreamrest.example.`,
  },
  {
    expect: "advertorial",
    lang: "en",
    title: "The travel backpack our editors swear by",
    text: `Paid partnership

This article was produced in partnership with Trailmark. We may earn a commission when you buy through links on this page.

After a month on the road, the Trailmark 40 is the one bag our team would take again. It fits under a plane seat, opens flat like a suitcase and has a padded sleeve for a laptop.

Use code TRAVEL15 for 15% off your first order. Shop now while stocks last.`,
  },
  {
    expect: "advertorial",
    lang: "de",
    title: "So schlafen Sie im Winter besser",
    text: `Anzeige

Kalte Nächte rauben vielen Menschen den Schlaf. Eine gleichmäßige Raumtemperatur, weniger Bildschirmzeit am Abend und die richtige Matratze helfen.

Die neue Hybridmatratze von TraumRuh passt sich der Körpertemperatur an. Nur für kurze Zeit erhalten Leserinnen und Leser mit dem Rabattcode WINTER20 20 % Rabatt – versandkostenfrei. Jetzt bestellen unter traumruh.example.`,
  },
  {
    expect: "advertorial",
    lang: "de",
    title: "Der Reiserucksack, den unsere Redaktion liebt",
    text: `Werbung

Dieser Beitrag entstand in Kooperation mit Trailmark und enthält Affiliate-Links: Kaufen Sie über diese Links, erhalten wir eine Provision.

Nach einem Monat unterwegs ist der Trailmark 40 der Rucksack, den unser Team wieder mitnehmen würde. Er passt unter jeden Flugzeugsitz und lässt sich wie ein Koffer öffnen.

Mit dem Gutscheincode REISE15 sparen Sie 15 % Rabatt auf Ihre erste Bestellung. Jetzt sichern!`,
  },
];

/** Texts that carry no type: the classifier must return []. */
export const NEUTRAL: Sample[] = [
  {
    expect: "",
    lang: "en",
    title: "How to repot a houseplant",
    text: `Choose a pot that is one size larger than the current one and has a drainage hole. Water the plant a day before repotting so the roots hold together.

Tip the plant out gently, loosen the roots with your fingers and trim any that look brown or mushy. Put a layer of fresh potting mix in the new pot, set the plant at the same depth as before and fill around it.

Water well and keep the plant out of direct sunlight for a week while it settles in.`,
  },
  {
    expect: "",
    lang: "de",
    title: "Sauerteigbrot selbst backen",
    text: `Für ein einfaches Sauerteigbrot vermischen Sie 500 Gramm Weizenmehl mit 350 Millilitern lauwarmem Wasser und 100 Gramm aktivem Anstellgut.

Lassen Sie den Teig eine Stunde ruhen, geben Sie dann zehn Gramm Salz dazu und falten Sie ihn in den folgenden drei Stunden alle dreißig Minuten.

Formen Sie einen Laib und lassen Sie ihn über Nacht im Kühlschrank gehen. Am nächsten Morgen backen Sie das Brot im vorgeheizten Topf bei 240 Grad etwa 45 Minuten.`,
  },
];
