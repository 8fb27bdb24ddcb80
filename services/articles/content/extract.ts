// Turns a publisher's HTML page into the text worth reading aloud: the
// article body as paragraphs, without menus, ads, captions or consent banners.
// Readability finds the body; we strip the obvious noise first because
// Readability keeps some of it (figure captions, share bars inside <article>).
import { Readability } from "@mozilla/readability";
import { parseHTML } from "linkedom";
import { markHeading, type HeadingLevel } from "../../../lib/headings.js";
import { pageMetaOf, type PageMeta } from "./page-meta.js";

export interface ExtractedContent {
  title?: string;
  /** The paragraphs parted by blank lines; h2 and h3 paragraphs carry their heading mark (lib/headings.ts). */
  text: string;
  paragraphs: string[];
}

type El = Element;

const NOISE_TAGS = [
  "script", "style", "noscript", "template", "iframe", "object", "embed", "svg", "canvas", "form", "button", "input",
  "select", "textarea", "nav", "aside", "footer", "figure", "figcaption", "picture", "img", "video", "audio", "map", "dialog",
];
const NOISE_ROLES = new Set(["navigation", "banner", "complementary", "contentinfo", "dialog", "alertdialog", "search", "menu", "menubar"]);
// Whole tokens of class/id names, split on "-", "_" and camel case, so that
// "ad-slot" matches but "header" or "read-more" do not.
const NOISE_TOKENS = new Set([
  "ad", "ads", "adslot", "advert", "adverts", "advertisement", "anzeige", "werbung", "sponsor", "sponsored", "promo", "promotion",
  "cookie", "cookies", "consent", "gdpr", "cmp", "share", "sharing", "shariff", "social", "newsletter", "subscribe", "subscription",
  "related", "recommended", "recommendations", "comments", "comment", "breadcrumb", "breadcrumbs", "popup", "modal", "overlay",
  "outbrain", "taboola", "sidebar", "widget", "caption", "credit", "credits", "copyright", "paywall", "toolbar", "tags", "skip", "print",
  "meta", "byline", "author", "autor", "dateline",
]);
const KEEP_TAGS = new Set(["html", "body", "main", "article"]);
const BLOCK_TAGS = new Set([
  "p", "div", "section", "article", "main", "header", "h1", "h2", "h3", "h4", "h5", "h6", "li", "ul", "ol", "dl", "dt", "dd",
  "blockquote", "pre", "table", "tr", "td", "th", "tbody", "thead", "br", "hr", "address", "details", "summary",
]);

/** A fetched page: its article and what the page says about itself (date, language, canonical URL). */
export interface ExtractedPage extends ExtractedContent {
  meta: PageMeta;
}

export function extractMainContent(html: string, url?: string): ExtractedContent {
  return extractFrom(parseHTML(withBase(asDocument(html), url)).document);
}

/** One parse for both: the metadata is read before the noise (scripts, head elements) is stripped. */
export function extractPage(html: string, url?: string): ExtractedPage {
  const { document } = parseHTML(withBase(asDocument(html), url));
  const meta = pageMetaOf(document, url);
  return { ...extractFrom(document), meta };
}

function extractFrom(document: Document): ExtractedContent {
  const pageTitle = clean(document.querySelector("title")?.textContent ?? "") || undefined;
  const h1 = clean(document.querySelector("h1")?.textContent ?? "") || undefined;
  removeNoise(document);

  let title: string | undefined;
  let paragraphs: string[] = [];
  try {
    const article = new Readability<El>(document.cloneNode(true) as unknown as Document, { serializer: (n) => n as El }).parse();
    if (article?.content) {
      title = clean(article.title ?? "") || undefined;
      paragraphs = blocksOf(article.content);
    }
  } catch {
    // Readability gives up on some malformed pages; the plain fallback below still works.
  }
  if (paragraphs.length === 0) {
    const body = document.querySelector("body") ?? document.documentElement;
    paragraphs = body ? blocksOf(body as El) : [];
  }
  // Page titles often append the site name ("Headline | Site"); the headline itself is better.
  if (h1 && (!title || title.includes(h1))) title = h1;
  title ??= pageTitle;
  // The headline is spoken separately; repeating it as the first paragraph would read it twice.
  if (title && paragraphs.length > 1 && same(paragraphs[0], title)) paragraphs = paragraphs.slice(1);
  if (h1 && paragraphs.length > 1 && same(paragraphs[0], h1)) paragraphs = paragraphs.slice(1);
  return { title, text: paragraphs.join("\n\n"), paragraphs };
}

// Fragments ("<p>a</p><p>b</p>", plain text) need a body, or the DOM leaves them outside one.
function asDocument(html: string): string {
  return /<(html|body)[\s>]/i.test(html) ? html : `<!doctype html><html><head></head><body>${html}</body></html>`;
}

function withBase(html: string, url: string | undefined): string {
  if (!url || /<base\s/i.test(html)) return html;
  try {
    const href = new URL(url).href.replace(/"/g, "%22");
    return html.replace(/<head(\s[^>]*)?>/i, (m) => `${m}<base href="${href}">`);
  } catch {
    return html;
  }
}

function removeNoise(document: Document): void {
  for (const el of Array.from(document.querySelectorAll(NOISE_TAGS.join(",")))) el.remove();
  const total = clean(document.querySelector("body")?.textContent ?? "").length;
  for (const el of Array.from(document.querySelectorAll("[hidden], [aria-hidden='true'], [role], [class], [id]"))) {
    if (!el.isConnected || KEEP_TAGS.has(el.tagName.toLowerCase()) || el.querySelector("article, main")) continue;
    // A wrapper named "page-with-ads" holding most of the text is the page, not an ad.
    if (clean(el.textContent ?? "").length > total / 2) continue;
    const role = el.getAttribute("role");
    if (el.hasAttribute("hidden") || el.getAttribute("aria-hidden") === "true" || (role && NOISE_ROLES.has(role)) || hasNoiseName(el)) el.remove();
  }
}

function hasNoiseName(el: El): boolean {
  const names = `${el.getAttribute("class") ?? ""} ${el.getAttribute("id") ?? ""}`;
  const tokens = names
    .replace(/([a-z])([A-Z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^a-z0-9]+/);
  return tokens.some((t) => NOISE_TOKENS.has(t));
}

// Section headings: they start the article's chapters (docs/transcripts.md). Readability turns an h1 inside the body into an h2.
const HEADING_TAGS: Readonly<Record<string, HeadingLevel>> = { h2: 2, h3: 3 };

/** Paragraph texts of an element: block elements split, inline runs joined; h2/h3 paragraphs marked as headings. */
function blocksOf(root: El): string[] {
  const out: string[] = [];
  let run = "";
  let heading: HeadingLevel | undefined;
  const flush = () => {
    const text = clean(run);
    if (text) out.push(heading ? markHeading(text, heading) : text);
    run = "";
  };
  const walk = (node: Node) => {
    for (const child of Array.from(node.childNodes)) {
      if (child.nodeType === 3) run += child.textContent ?? "";
      else if (child.nodeType === 1) {
        const tag = (child as El).tagName.toLowerCase();
        if (NOISE_TAGS.includes(tag)) continue;
        if (BLOCK_TAGS.has(tag)) {
          flush();
          const outer = heading;
          heading = HEADING_TAGS[tag] ?? outer;
          walk(child);
          flush();
          heading = outer;
        } else walk(child);
      }
    }
  };
  walk(root);
  flush();
  return out;
}

function clean(s: string): string {
  return s.replace(/[\s\u00a0\u200b]+/g, " ").trim();
}

function same(a: string, b: string): boolean {
  const norm = (s: string) => s.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, "");
  return norm(a) === norm(b);
}
