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

export function atomFeed(items: TestItem[]): string {
  const body = items
    .map((i) => `<entry><id>${esc(i.id)}</id><title>${esc(i.title)}</title><link rel="alternate" href="${esc(i.link)}"/><content type="html">${esc(i.html)}</content>${i.date ? `<published>${i.date}</published><updated>${i.date}</updated>` : ""}</entry>`)
    .join("\n");
  return `<?xml version="1.0" encoding="utf-8"?>\n<feed xmlns="http://www.w3.org/2005/Atom"><title>Test news</title><id>urn:test</id>\n${body}\n</feed>`;
}

export function jsonFeed(items: TestItem[]): string {
  return JSON.stringify({
    version: "https://jsonfeed.org/version/1.1",
    title: "Test news",
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
