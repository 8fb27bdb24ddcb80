import { expect } from "chai";
import { extractMainContent } from "../../services/articles/content/extract.js";

const EN_BODY = [
  "The city council of Millbrook voted on Tuesday evening to turn the disused freight yard north of the river into a public park, ending a dispute that has run for almost a decade.",
  "Under the plan approved by seven votes to two, the rail company will hand over the eleven-hectare site next spring. Work on paths, a playground and a wetland area is expected to start in the autumn.",
  "“We have waited a long time for this,” said Maria Okafor, who chairs the residents’ association in the neighbouring district. “Children here have had nowhere to play but the car park.”",
  "Opponents on the council had argued that the land should be sold to developers to help pay for repairs to the town’s schools. The budget committee will now look for other funding.",
  "The first section of the park is due to open in the summer of next year, according to the council’s timetable.",
];

const EN_PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Millbrook council backs park on old freight yard | The Millbrook Gazette</title>
  <meta property="og:title" content="Millbrook council backs park on old freight yard">
  <style>.ad-slot { min-height: 250px } body { font-family: serif }</style>
  <script>window.dataLayer = window.dataLayer || []; dataLayer.push({ event: "pageview" });</script>
</head>
<body>
  <div id="cookie-consent" class="cmp-banner">
    <p>We use cookies to improve your experience. By continuing to browse you accept our cookie policy.</p>
    <button>Accept all</button>
  </div>
  <header class="site-header">
    <a class="logo" href="/">The Millbrook Gazette</a>
    <nav><ul><li><a href="/news">News</a></li><li><a href="/sport">Sport</a></li><li><a href="/weather">Weather</a></li><li><a href="/jobs">Jobs</a></li></ul></nav>
  </header>
  <div class="breadcrumbs"><a href="/">Home</a> › <a href="/news">News</a> › Local</div>
  <main>
    <article class="story">
      <h1>Millbrook council backs park on old freight yard</h1>
      <p class="byline">By Tom Reyes · 12 March</p>
      <div class="share-bar"><a href="#">Share on Facebook</a> <a href="#">Share on X</a> <a href="#">Email this story</a></div>
      <figure>
        <img src="/img/yard.jpg" alt="The freight yard">
        <figcaption>The disused freight yard seen from the river bridge. Photo: Gazette archive</figcaption>
      </figure>
      <p>${EN_BODY[0]}</p>
      <p>${EN_BODY[1]}</p>
      <div class="ad-slot advertisement"><span>Advertisement</span><p>Refinance your mortgage today with 0% fees!</p></div>
      <p>${EN_BODY[2]}</p>
      <script>loadVideoPlayer("player-1");</script>
      <p>${EN_BODY[3]}</p>
      <p>${EN_BODY[4]}</p>
      <div class="newsletter-signup"><p>Get the Gazette in your inbox every morning.</p><form><input type="email"><button>Sign up</button></form></div>
    </article>
    <aside class="sidebar">
      <h3>Most read</h3>
      <ol><li><a href="/a">Bakery closes after 80 years</a></li><li><a href="/b">Road works on the ring road</a></li></ol>
    </aside>
  </main>
  <section class="related-articles"><h2>Related</h2><a href="/c">Freight yard sale stalls again</a></section>
  <footer><p>© 2024 Millbrook Gazette Ltd. All rights reserved.</p><a href="/privacy">Privacy</a></footer>
</body>
</html>`;

const DE_BODY = [
  "Der Gemeinderat von Lindenau hat am Dienstagabend beschlossen, die stillgelegte Papierfabrik am Mühlbach zu einem Kultur- und Bildungszentrum umzubauen.",
  "Nach den Plänen der Stadtverwaltung sollen in dem Backsteinbau eine Bibliothek, die Volkshochschule und mehrere Ateliers unterkommen. Die Kosten werden auf rund 14 Millionen Euro geschätzt.",
  "„Das Gebäude ist ein Stück Stadtgeschichte, das wir nicht verfallen lassen wollen“, sagte Bürgermeisterin Petra Hollmann nach der Sitzung.",
  "Die Opposition kritisierte, dass die Folgekosten für den Betrieb noch nicht geklärt seien. Ein Gutachten dazu soll bis zum Sommer vorliegen.",
  "Baubeginn ist nach aktueller Planung im Frühjahr kommenden Jahres; die Eröffnung ist für 2027 vorgesehen.",
];

const DE_PAGE = `<!DOCTYPE html>
<html lang="de">
<head>
  <meta charset="utf-8">
  <title>Lindenau: Alte Papierfabrik wird Kulturzentrum - Lindenauer Anzeiger</title>
  <script type="application/ld+json">{"@type":"NewsArticle","headline":"Alte Papierfabrik wird Kulturzentrum"}</script>
  <script src="/tracking.js"></script>
</head>
<body>
  <div class="consent-layer" role="dialog"><p>Wir verwenden Cookies und ähnliche Technologien. Mit „Alle akzeptieren“ stimmen Sie der Verarbeitung zu.</p><button>Alle akzeptieren</button></div>
  <nav class="hauptnavigation"><a href="/">Startseite</a> <a href="/lokales">Lokales</a> <a href="/sport">Sport</a> <a href="/kultur">Kultur</a></nav>
  <div id="page">
    <div class="content">
      <h1>Alte Papierfabrik wird Kulturzentrum</h1>
      <div class="teaser-meta">Von Anna Berger | 14.03.2024, 18:30 Uhr</div>
      <div class="shariff"><ul><li>Teilen</li><li>Twittern</li><li>Per E-Mail senden</li></ul></div>
      <figure class="bild"><img src="/fabrik.jpg"><figcaption>Die alte Papierfabrik am Mühlbach steht seit 1998 leer. Foto: Archiv</figcaption></figure>
      <p>${DE_BODY[0]}</p>
      <p>${DE_BODY[1]}</p>
      <div class="anzeige"><small>Anzeige</small><p>Jetzt Stromtarif wechseln und 200 Euro sparen!</p></div>
      <p>${DE_BODY[2]}</p>
      <p>${DE_BODY[3]}</p>
      <noscript><p>Bitte aktivieren Sie JavaScript.</p></noscript>
      <p>${DE_BODY[4]}</p>
      <div class="artikel-tags">Schlagworte: Lindenau, Gemeinderat</div>
    </div>
    <div class="sidebar"><h3>Meistgelesen</h3><ul><li>Neuer Radweg eröffnet</li><li>Stadtfest abgesagt</li></ul></div>
  </div>
  <div class="comments"><h3>Kommentare (12)</h3><p>Endlich passiert da was!</p></div>
  <footer>Impressum · Datenschutz · © Lindenauer Anzeiger</footer>
</body>
</html>`;

const NOISE_EN = [
  "cookies", "Accept all", "Weather", "Jobs", "Home ›", "Share on Facebook", "Email this story", "freight yard seen from the river bridge",
  "Refinance", "Advertisement", "loadVideoPlayer", "dataLayer", "font-family", "inbox every morning", "Most read", "Bakery closes",
  "Freight yard sale stalls", "All rights reserved",
];
const NOISE_DE = [
  "Cookies", "Alle akzeptieren", "Startseite", "Lokales", "Teilen", "Twittern", "steht seit 1998 leer", "Stromtarif", "JavaScript",
  "Meistgelesen", "Radweg", "Kommentare", "Endlich passiert", "Impressum", "NewsArticle", "Anna Berger",
];

describe("extractMainContent", () => {
  it("keeps the English article body, in order, as paragraphs, and nothing around it", () => {
    const r = extractMainContent(EN_PAGE, "https://gazette.example/news/park");
    expect(r.title).to.equal("Millbrook council backs park on old freight yard");
    expect(r.paragraphs).to.deep.equal(EN_BODY);
    for (const noise of NOISE_EN) expect(r.text, noise).not.to.include(noise);
    expect(r.text).to.equal(r.paragraphs.join("\n\n"));
  });

  it("keeps the German article body and drops consent layer, ads, captions, teasers and comments", () => {
    const r = extractMainContent(DE_PAGE);
    expect(r.title).to.equal("Alte Papierfabrik wird Kulturzentrum");
    expect(r.paragraphs).to.deep.equal(DE_BODY);
    for (const noise of NOISE_DE) expect(r.text, noise).not.to.include(noise);
    expect(r.text).to.include("„Das Gebäude ist ein Stück Stadtgeschichte");
  });

  it("does not read the headline twice", () => {
    const r = extractMainContent(EN_PAGE);
    expect(r.paragraphs[0]).not.to.equal(r.title);
  });

  it("decodes entities and collapses whitespace inside paragraphs", () => {
    const r = extractMainContent("<article><p>Caf&eacute;   &amp;\n   Bar&nbsp;opened <em>today</em>.</p><p>Second&#160;one.</p></article>");
    expect(r.paragraphs).to.deep.equal(["Café & Bar opened today.", "Second one."]);
  });

  it("falls back to plain text for pages without an article structure", () => {
    expect(extractMainContent("Just a line of plain text.").paragraphs).to.deep.equal(["Just a line of plain text."]);
    const r = extractMainContent("<html><body><div>First block</div><div>Second <b>block</b></div><script>x()</script></body></html>");
    expect(r.paragraphs).to.deep.equal(["First block", "Second block"]);
  });

  it("returns empty text for empty or script-only input instead of failing", () => {
    expect(extractMainContent("")).to.deep.include({ text: "", paragraphs: [] });
    expect(extractMainContent("<script>alert(1)</script><style>p{}</style>")).to.deep.include({ text: "", paragraphs: [] });
    expect(extractMainContent("<<<>>> <p unclosed <div").paragraphs).to.be.an("array");
  });

  it("keeps a wrapper whose name looks like an ad when it holds the article", () => {
    const paras = ["A long enough first paragraph about the harbour renovation, which took three years to finish.", "A second paragraph with details on the costs and who paid for them."];
    const r = extractMainContent(`<body><div class="page has-ads"><p>${paras[0]}</p><p>${paras[1]}</p></div><div class="ad">Buy now</div></body>`);
    expect(r.paragraphs).to.deep.equal(paras);
  });
});
