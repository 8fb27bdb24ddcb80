// What a page says about itself (services/articles/content/page-meta.ts):
// publication date, language and canonical URL, as news sites write them.
import { expect } from "chai";
import { parseHTML } from "linkedom";
import { extractPage } from "../../services/articles/content/extract.js";
import { isoDateTime, localesOf, pageMetaOf } from "../../services/articles/content/page-meta.js";
import { voiceForPage } from "../../services/articles/pages/fetch-page.js";
import { articlePageHtml, newsParagraphs } from "../support/article-pages.js";

const metaOf = (html: string, url = "https://news.example/a/b.html") => pageMetaOf(parseHTML(html).document, url);
const page = (head: string, body = "<p>Text.</p>", htmlAttrs = "") => `<!doctype html><html${htmlAttrs}><head>${head}</head><body>${body}</body></html>`;

describe("page metadata: date, language, canonical URL", () => {
  it("takes the date from JSON-LD first (an article's, also inside @graph), then article:published_time, then <time datetime>", () => {
    const ld = (o: unknown) => `<script type="application/ld+json">${JSON.stringify(o)}</script>`;
    expect(metaOf(page(ld({ "@type": "NewsArticle", datePublished: "2026-11-03T08:15:00+01:00" }))).published).to.equal("2026-11-03T07:15:00.000Z");
    expect(metaOf(page(ld({ "@graph": [{ "@type": "ImageObject", datePublished: "2020-01-01" }, { "@type": ["BlogPosting"], datePublished: "2026-10-01T12:00:00Z" }] }))).published).to.equal("2026-10-01T12:00:00.000Z");
    // A dated thing that is not an article still beats nothing.
    expect(metaOf(page(ld([{ "@type": "Event", datePublished: "2025-05-05" }]))).published).to.equal("2025-05-05T00:00:00.000Z");
    expect(metaOf(page(`<meta property="article:published_time" content="2026-09-09T09:09:09-02:00">${ld({ "@type": "Article" })}`)).published).to.equal("2026-09-09T11:09:09.000Z");
    expect(metaOf(page("", `<aside><time datetime="2001-01-01">old</time></aside><article><time datetime="2026-08-08T10:00">today</time></article>`)).published).to.equal("2026-08-08T10:00:00.000Z");
    expect(metaOf(page("", `<p><time datetime="yesterday">x</time> <time datetime="2026-07-07">y</time></p>`)).published).to.equal("2026-07-07T00:00:00.000Z");
  });

  it("ignores what is no date: broken JSON-LD, words, dates off the calendar", () => {
    expect(metaOf(page(`<script type="application/ld+json">{"@type": "Article", datePublished: </script><meta property="article:published_time" content="Tuesday">`)).published).to.equal(undefined);
    expect(isoDateTime("2026-02-30")).to.equal(undefined);
    expect(isoDateTime("2026-02-30T23:00:00+02:00")).to.equal(undefined);
    expect(isoDateTime("2026-03-01T00:30:00+02:00")).to.equal("2026-02-28T22:30:00.000Z");
    expect(isoDateTime("2026-13-01T00:00:00Z")).to.equal(undefined);
    expect(isoDateTime("3 Nov 2026")).to.equal(undefined);
    expect(isoDateTime(" 2026-11-03T08:15:00.123456+0100 ")).to.equal("2026-11-03T07:15:00.123Z");
  });

  it("takes the language from <html lang>, else og:locale, and maps it to a voice locale when one speaks it", () => {
    expect(metaOf(page("", undefined, ' lang="de-AT"')).lang).to.equal("de-AT");
    expect(metaOf(page('<meta property="og:locale" content="en_GB">')).lang).to.equal("en_GB");
    expect(metaOf(page('<meta property="og:locale" content="en_GB">', undefined, ' lang="de"')).lang).to.equal("de");
    expect(metaOf(page("")).lang).to.equal(undefined);
    expect(localesOf("de-AT")).to.deep.equal(["de-DE"]);
    expect(localesOf("de_DE")).to.deep.equal(["de-DE"]);
    expect(localesOf("en-us")).to.deep.equal(["en-US", "en-GB"]);
    expect(localesOf("en_GB")).to.deep.equal(["en-GB", "en-US"]);
    expect(localesOf("EN")).to.have.members(["en-GB", "en-US"]);
    expect(localesOf("fr-FR")).to.deep.equal([]);
    expect(localesOf("")).to.deep.equal([]);
  });

  it("keeps the project's voice for a page in a language it speaks, and finds one that speaks it otherwise", () => {
    expect(voiceForPage({ voice: "alloy", lang: "en-US" }, "de")).to.deep.equal({ voice: "alloy", lang: "de-DE" });
    // A British page: alloy speaks English, if not British English.
    expect(voiceForPage({ voice: "alloy", lang: "en-US" }, "en-GB")).to.deep.equal({ voice: "alloy", lang: "en-US" });
    expect(voiceForPage({ voice: "bf_emma", lang: "en-US" }, "en-GB")).to.deep.equal({ voice: "bf_emma", lang: "en-GB" });
    expect(voiceForPage({ voice: "de-DE-KatjaNeural", lang: "de-DE" }, "en")).to.deep.equal({ voice: "alloy", lang: "en-US" });
    expect(voiceForPage({ voice: "af_heart", lang: "en-US" }, "de-CH")).to.deep.equal({ voice: "alloy", lang: "de-DE" });
    expect(voiceForPage({ voice: "nova", lang: "en-US" }, "fr")).to.deep.equal({ voice: "nova", lang: "en-US" });
    expect(voiceForPage({ voice: "nova", lang: "de-DE" }, undefined)).to.deep.equal({ voice: "nova", lang: "de-DE" });
  });

  it("takes the canonical URL from <link rel=canonical> (relative ones resolved against the page), else og:url; never a non-http one", () => {
    expect(metaOf(page('<link rel="canonical" href="/news/harbour">')).canonicalUrl).to.equal("https://news.example/news/harbour");
    expect(metaOf(page('<link rel="alternate canonical" href="https://news.example/x">')).canonicalUrl).to.equal("https://news.example/x");
    expect(metaOf(page('<meta property="og:url" content="https://news.example/og">')).canonicalUrl).to.equal("https://news.example/og");
    expect(metaOf(page('<link rel="canonical" href="javascript:alert(1)"><meta property="og:url" content="https://news.example/og">')).canonicalUrl).to.equal("https://news.example/og");
    expect(metaOf(page("")).canonicalUrl).to.equal(undefined);
  });

  it("extractPage reads the metadata and the article from one parse, without the page's noise", () => {
    const paragraphs = newsParagraphs(600);
    const html = articlePageHtml({ title: "Harbour reopens", paragraphs, lang: "en", jsonLdDate: "2026-11-03", canonical: "https://news.example/harbour", padTo: 50_000 });
    const p = extractPage(html, "https://news.example/harbour?utm=x");
    expect(p.title).to.equal("Harbour reopens");
    expect(p.meta).to.deep.equal({ published: "2026-11-03T00:00:00.000Z", lang: "en", canonicalUrl: "https://news.example/harbour" });
    expect(p.paragraphs).to.deep.equal(paragraphs);
  });
});
