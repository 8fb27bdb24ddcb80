// Feed documents for the sources tests and benches, written from a list of items.
export interface TestItem {
  id: string;
  link: string;
  title: string;
  html: string;
  date?: string;
}

const esc = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

export function rssFeed(items: TestItem[], opts: { lang?: string; guid?: boolean; full?: boolean } = {}): string {
  const body = items
    .map(
      (i) =>
        `<item><title>${esc(i.title)}</title><link>${esc(i.link)}</link>${opts.guid === false ? "" : `<guid isPermaLink="false">${esc(i.id)}</guid>`}` +
        `<description>${esc(i.html.replace(/<[^>]+>/g, "").slice(0, 80))}</description>` +
        (opts.full === false ? "" : `<content:encoded><![CDATA[${i.html}]]></content:encoded>`) +
        (i.date ? `<pubDate>${new Date(i.date).toUTCString()}</pubDate>` : "") +
        `</item>`,
    )
    .join("\n");
  return `<?xml version="1.0" encoding="UTF-8"?>\n<rss version="2.0" xmlns:content="http://purl.org/rss/1.0/modules/content/"><channel><title>Test news</title><link>https://news.example/</link>${opts.lang ? `<language>${opts.lang}</language>` : ""}\n${body}\n</channel></rss>`;
}

/** `xhtml`: each item's HTML as XHTML content (`type="xhtml"`, in its div) instead of escaped HTML. */
export function atomFeed(items: TestItem[], opts: { lang?: string; xhtml?: boolean } = {}): string {
  const content = (html: string) => (opts.xhtml ? `<content type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml">${html}</div></content>` : `<content type="html">${esc(html)}</content>`);
  const body = items
    .map((i) => `<entry><id>${esc(i.id)}</id><title>${esc(i.title)}</title><link rel="alternate" href="${esc(i.link)}"/>${content(i.html)}${i.date ? `<published>${i.date}</published><updated>${i.date}</updated>` : ""}</entry>`)
    .join("\n");
  return `<?xml version="1.0" encoding="utf-8"?>\n<feed xmlns="http://www.w3.org/2005/Atom"${opts.lang ? ` xml:lang="${opts.lang}"` : ""}><title>Test news</title><id>urn:test</id>\n${body}\n</feed>`;
}

export function jsonFeed(items: TestItem[], opts: { lang?: string } = {}): string {
  return JSON.stringify({
    version: "https://jsonfeed.org/version/1.1",
    title: "Test news",
    ...(opts.lang ? { language: opts.lang } : {}),
    items: items.map((i) => ({ id: i.id, url: i.link, title: i.title, content_html: i.html, ...(i.date ? { date_published: i.date } : {}) })),
  });
}

export function sitemap(items: TestItem[], opts: { news?: boolean } = {}): string {
  const body = items
    .map((i) =>
      opts.news
        ? `<url><loc>${esc(i.link)}</loc><news:news><news:publication><news:name>Test</news:name><news:language>en</news:language></news:publication>${i.date ? `<news:publication_date>${i.date}</news:publication_date>` : ""}<news:title>${esc(i.title)}</news:title></news:news></url>`
        : `<url><loc>${esc(i.link)}</loc>${i.date ? `<lastmod>${i.date}</lastmod>` : ""}</url>`,
    )
    .join("\n");
  return `<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:news="http://www.google.com/schemas/sitemap-news/0.9">\n${body}\n</urlset>`;
}

/** A sitemap index listing `maps` (their addresses, with lastmod where given). */
export function sitemapIndex(maps: Array<{ loc: string; lastmod?: string }>): string {
  const body = maps.map((m) => `<sitemap><loc>${esc(m.loc)}</loc>${m.lastmod ? `<lastmod>${m.lastmod}</lastmod>` : ""}</sitemap>`).join("\n");
  return `<?xml version="1.0" encoding="UTF-8"?>\n<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n${body}\n</sitemapindex>`;
}
