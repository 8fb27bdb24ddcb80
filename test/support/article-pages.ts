// Publisher pages for create-from-URL tests and the bench: an article page as
// news sites write them (head metadata, navigation, ads, the article, a
// footer), and a loopback server that serves pages by path. The system under
// test reaches the server only because its FETCH_ALLOW_PRIVATE names it.
import http from "node:http";
import type { AddressInfo } from "node:net";

export interface ArticlePage {
  title: string;
  paragraphs: string[];
  /** `<html lang>`; absent: none. */
  lang?: string;
  /** og:locale, e.g. "de_DE". */
  ogLocale?: string;
  /** JSON-LD datePublished of a NewsArticle. */
  jsonLdDate?: string;
  /** article:published_time. */
  metaDate?: string;
  /** `<time datetime>` in the article. */
  timeDate?: string;
  canonical?: string;
  ogUrl?: string;
  /** Filler around the article (menus, teasers) up to about this many bytes in all. */
  padTo?: number;
}

const esc = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/"/g, "&quot;");

export function articlePageHtml(p: ArticlePage): string {
  const head = [
    `<meta charset="utf-8"><title>${esc(p.title)} | Example News</title>`,
    p.canonical ? `<link rel="canonical" href="${esc(p.canonical)}">` : "",
    p.ogUrl ? `<meta property="og:url" content="${esc(p.ogUrl)}">` : "",
    p.ogLocale ? `<meta property="og:locale" content="${esc(p.ogLocale)}">` : "",
    p.metaDate ? `<meta property="article:published_time" content="${esc(p.metaDate)}">` : "",
    p.jsonLdDate
      ? `<script type="application/ld+json">${JSON.stringify({ "@context": "https://schema.org", "@graph": [{ "@type": "WebSite", name: "Example News" }, { "@type": "NewsArticle", headline: p.title, datePublished: p.jsonLdDate }] })}</script>`
      : "",
    `<script>window.tracking = { id: 42 };</script><style>body { font-family: serif; }</style>`,
  ].join("\n");
  const nav = `<header class="site-header"><nav><a href="/">Home</a> <a href="/local">Local</a> <a href="/sport">Sport</a></nav></header>`;
  const ad = `<div class="ad-slot">Advertisement: cheap flights to the coast</div>`;
  const article = `<article><h1>${esc(p.title)}</h1>${p.timeDate ? `<p class="dateline"><time datetime="${esc(p.timeDate)}">published</time></p>` : ""}
${p.paragraphs.map((t) => `<p>${esc(t)}</p>`).join("\n")}
<figure><img src="photo.jpg" alt=""><figcaption>Photo: city archive</figcaption></figure></article>`;
  let filler = "";
  const page = (extra: string) =>
    `<!doctype html><html${p.lang ? ` lang="${esc(p.lang)}"` : ""}><head>${head}</head><body>${nav}${ad}<main>${article}</main><aside class="related">${extra}</aside><footer>Imprint · Privacy</footer></body></html>`;
  if (p.padTo) {
    const teaser = (i: number) => `<div class="teaser"><a href="/story/${i}">Another story number ${i} from the archive</a><span class="meta">3 min read</span></div>\n`;
    for (let i = 0; page(filler).length < p.padTo; i++) filler += teaser(i);
  }
  return page(filler);
}

/** Newsy English sentences, deterministic, about `chars` characters in paragraphs of four or five sentences. */
export function newsParagraphs(chars: number, lang: "en" | "de" = "en"): string[] {
  const en = [
    "The harbour reopened on Monday after two years of repairs, the city said in a statement.",
    "Ferries will run every hour from next week, and the first boats were full by noon.",
    "Local traders welcomed the news, saying the closure had cost them many of their regular customers.",
    "The repairs were paid for by the regional government and a grant from the national transport fund.",
    "Engineers replaced the old wooden piers with concrete ones that should last for fifty years.",
    "The mayor thanked the workers and the neighbours for their patience during the long works.",
  ];
  const de = [
    "Der Hafen ist am Montag nach zwei Jahren Bauzeit wieder geöffnet worden, teilte die Stadt mit.",
    "Ab der kommenden Woche fahren die Fähren wieder jede Stunde, die ersten Boote waren schon mittags voll.",
    "Die Händler am Kai begrüßten die Nachricht, denn die Schließung hatte sie viele Stammkunden gekostet.",
    "Bezahlt wurden die Arbeiten vom Land und mit Mitteln aus dem Verkehrsfonds des Bundes.",
    "Die alten Holzstege wurden durch Betonstege ersetzt, die fünfzig Jahre halten sollen.",
    "Die Bürgermeisterin dankte den Arbeitern und den Anwohnern für ihre Geduld während der langen Bauzeit.",
  ];
  const pool = lang === "de" ? de : en;
  const out: string[] = [];
  let total = 0;
  for (let i = 0; total < chars; i++) {
    const para = Array.from({ length: 4 + (i % 2) }, (_, j) => pool[(i + j) % pool.length]).join(" ");
    out.push(para);
    total += para.length;
  }
  return out;
}

export type PageAnswer = { status: number; body: string; type?: string } | (() => Promise<{ status: number; body: string; type?: string }>);

/** Serves `pages[path]`; anything else is a 404 page. Listens on 127.0.0.1 only. */
export class PageServer {
  readonly pages = new Map<string, PageAnswer>();
  readonly requests: string[] = [];
  url = "";
  port = 0;
  private server?: http.Server;

  async start(): Promise<void> {
    this.server = http.createServer((req, res) => {
      this.requests.push(req.url ?? "");
      const answer = this.pages.get(req.url ?? "");
      const send = (a: { status: number; body: string; type?: string }) => res.writeHead(a.status, { "content-type": a.type ?? "text/html; charset=utf-8" }).end(a.body);
      if (!answer) send({ status: 404, body: "<!doctype html><html><body><h1>Not found</h1></body></html>" });
      else if (typeof answer === "function") answer().then(send, () => res.destroy());
      else send(answer);
    });
    await new Promise<void>((r) => this.server!.listen(0, "127.0.0.1", r));
    this.port = (this.server.address() as AddressInfo).port;
    this.url = `http://127.0.0.1:${this.port}`;
  }

  async stop(): Promise<void> {
    const s = this.server;
    if (!s) return;
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
}
