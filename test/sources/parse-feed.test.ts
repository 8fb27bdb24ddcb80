// The four kinds of source become the same items: identity, link, title,
// full text where the feed has it, date and language.
import assert from "node:assert/strict";
import { detectKind, FeedParseError, parseFeed } from "../../services/articles/sources/parse-feed.js";
import { atomFeed, jsonFeed, rssFeed, sitemap, sitemapIndex } from "./feeds.js";

describe("feed parsing (RSS, Atom, JSON Feed, sitemaps)", () => {
  const items = [
    { id: "urn:one", link: "https://news.example/one", title: "Bridge reopens", html: "<p>The old bridge reopened on Monday.</p>", date: "2026-05-02T08:00:00Z" },
    { id: "urn:two", link: "https://news.example/two", title: "Café & bakery", html: "<p>A bakery opened.</p>", date: "2026-05-01T08:00:00Z" },
  ];

  it("RSS 2.0: guid, link, content:encoded, pubDate, channel language", () => {
    const f = parseFeed(rssFeed(items, { lang: "de-DE" }));
    assert.equal(f.kind, "rss");
    assert.equal(f.items.length, 2);
    assert.deepEqual(
      { key: f.items[0].key, link: f.items[0].link, title: f.items[1].title, content: f.items[0].content, lang: f.items[0].lang },
      { key: "urn:one", link: "https://news.example/one", title: "Café & bakery", content: "<p>The old bridge reopened on Monday.</p>", lang: "de-DE" },
    );
    assert.equal(f.items[0].published, Date.parse("2026-05-02T08:00:00Z"));
  });

  it("RSS without guid: the link is the identity; without content:encoded there is no full text", () => {
    const f = parseFeed(rssFeed(items, { guid: false, full: false }));
    assert.equal(f.items[0].key, "https://news.example/one");
    assert.equal(f.items[0].content, undefined);
    assert.match(f.items[0].summary ?? "", /bridge/);
  });

  it("Atom: id, alternate link, content, published", () => {
    const f = parseFeed(atomFeed(items));
    assert.equal(f.kind, "atom");
    assert.deepEqual([f.items[0].key, f.items[0].link, f.items[0].title], ["urn:one", "https://news.example/one", "Bridge reopens"]);
    assert.match(f.items[0].content ?? "", /old bridge/);
    assert.equal(f.items[1].published, Date.parse("2026-05-01T08:00:00Z"));
  });

  it("Atom XHTML content: the markup inside its div, whole and in order, as HTML", () => {
    const xhtml = [{ ...items[0], html: '<p>Die <b>alte</b> Br\u00fccke &amp; <a href="/x">mehr</a> dazu.</p><xhtml:p xmlns:xhtml="http://www.w3.org/1999/xhtml">Zweiter Absatz.</xhtml:p>' }];
    const f = parseFeed(atomFeed(xhtml, { xhtml: true }));
    assert.equal(f.items[0].content, '<p>Die <b>alte</b> Br\u00fccke &amp; <a href="/x">mehr</a> dazu.</p><p xmlns:xhtml="http://www.w3.org/1999/xhtml">Zweiter Absatz.</p>');
    // Beside it, escaped HTML content reads as before.
    assert.equal(parseFeed(atomFeed(items)).items[1].content, "<p>A bakery opened.</p>");
  });

  it("the feed's language: Atom xml:lang and JSON Feed language reach every item", () => {
    assert.deepEqual(parseFeed(atomFeed(items, { lang: "de-AT" })).items.map((i) => i.lang), ["de-AT", "de-AT"]);
    assert.deepEqual(parseFeed(jsonFeed(items, { lang: "de" })).items.map((i) => i.lang), ["de", "de"]);
    assert.equal(parseFeed(jsonFeed(items)).items[0].lang, undefined);
  });

  it("a sitemap index: its sitemaps newest first by lastmod, undated ones after in their order", () => {
    const f = parseFeed(
      sitemapIndex([
        { loc: "/a.xml" },
        { loc: "https://news.example/old.xml", lastmod: "2026-01-01" },
        { loc: "https://news.example/new.xml", lastmod: "2026-12-01T10:00:00Z" },
        { loc: "https://news.example/b.xml" },
      ]),
      undefined,
      { baseUrl: "https://news.example/sitemap.xml" },
    );
    assert.deepEqual(f.sitemaps, ["https://news.example/new.xml", "https://news.example/old.xml", "https://news.example/a.xml", "https://news.example/b.xml"]);
    assert.deepEqual(f.items, []);
  });

  it("JSON Feed: id, url, content_html, date_published", () => {
    const f = parseFeed(jsonFeed(items));
    assert.equal(f.kind, "jsonfeed");
    assert.deepEqual([f.items[1].key, f.items[1].link, f.items[1].content], ["urn:two", "https://news.example/two", "<p>A bakery opened.</p>"]);
  });

  it("news sitemap: loc is the identity, news:title and publication date; no text", () => {
    const f = parseFeed(sitemap(items, { news: true }));
    assert.equal(f.kind, "sitemap");
    assert.deepEqual([f.items[0].key, f.items[0].title, f.items[0].content], ["https://news.example/one", "Bridge reopens", undefined]);
    assert.equal(f.items[0].published, Date.parse("2026-05-02T08:00:00Z"));
  });

  it("keeps at most maxItems and says how many there were", () => {
    const many = Array.from({ length: 30 }, (_, i) => ({ ...items[0], id: `urn:${i}`, link: `https://news.example/${i}` }));
    const f = parseFeed(rssFeed(many), undefined, { maxItems: 10 });
    assert.equal(f.items.length, 10);
    assert.equal(f.total, 30);
  });

  it("garbage, HTML pages and a kind that does not match are errors in words", () => {
    assert.throws(() => parseFeed("<html><body>Not a feed</body></html>"), (e: unknown) => e instanceof FeedParseError && /not RSS, Atom, JSON Feed or a sitemap/.test(e.message));
    assert.throws(() => parseFeed("\u0000\u0001garbage"), FeedParseError);
    assert.throws(() => parseFeed(rssFeed(items), "atom"), /expected atom but the answer is rss/);
    assert.throws(() => parseFeed('{"version": "https://jsonfeed.org/version/1.1", "items": [}'), /JSON is malformed/);
    assert.equal(detectKind('<?xml version="1.0"?>\n<!-- c --><urlset>'), "sitemap");
  });
});
