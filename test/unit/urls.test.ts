// lib/urls.ts: one URL, however it is written.
import { expect } from "chai";
import { normalizeHttpUrl, readableUrl, urlLookupForms } from "../../lib/urls.js";

describe("normalizeHttpUrl", () => {
  const same: Array<[string, string]> = [
    ["https://example.com/news/über-uns", "https://example.com/news/%C3%BCber-uns"],
    ["https://example.com/news/%c3%bcber-uns", "https://example.com/news/%C3%BCber-uns"],
    ["https://bücher.example/x", "https://xn--bcher-kva.example/x"],
    ["https://example.com/x?q=ü", "https://example.com/x?q=%C3%BC"],
    ["HTTPS://EXAMPLE.COM/x", "https://example.com/x"],
    ["Http://Example.com:80/a b", "http://example.com/a%20b"],
    ["https://example.com", "https://example.com/"],
    ["https://münchen.de/straße?ß=1#Teil ü", "https://xn--mnchen-3ya.de/stra%C3%9Fe?%C3%9F=1#Teil%20%C3%BC"],
  ];
  for (const [given, normal] of same) {
    it(`${given} → ${normal}, and that again to itself`, () => {
      expect(normalizeHttpUrl(given)).to.equal(normal);
      expect(normalizeHttpUrl(normal)).to.equal(normal);
    });
  }

  for (const bad of ["/news/x", "example.com/x", "ftp://example.com/x", "https:example.com", "https://ex ample.com/", "https://", "mailto:a@b.c", "javascript:alert(1)", ""]) {
    it(`refuses ${JSON.stringify(bad)}`, () => expect(normalizeHttpUrl(bad)).to.equal(null));
  }

  it("looks up by the normalised form and by the text as given when that differs", () => {
    expect(urlLookupForms("https://example.com/x")).to.deep.equal(["https://example.com/x"]);
    expect(urlLookupForms("HTTPS://EXAMPLE.COM/x")).to.deep.equal(["https://example.com/x", "HTTPS://EXAMPLE.COM/x"]);
    expect(urlLookupForms("not a url")).to.deep.equal(["not a url"]);
  });
});

describe("readableUrl", () => {
  it("shows a normalised URL with its Unicode host and decoded UTF-8 escapes, keeping escapes that would change its meaning", () => {
    expect(readableUrl("https://xn--bcher-kva.example/news/%C3%BCber-uns?q=%C3%BC#x")).to.equal("https://bücher.example/news/über-uns?q=ü#x");
    expect(readableUrl("https://xn--bcher-kva.example:8443/a%2Fb%20c")).to.equal("https://bücher.example:8443/a%2Fb%20c");
    expect(readableUrl("https://example.com/bad%FF")).to.equal("https://example.com/bad%FF");
  });
});
