// One parser for the four kinds of source a project can follow: RSS 2.0,
// Atom, JSON Feed and (news) sitemaps. Each becomes the same list of items;
// what the kinds call things differently (guid / id / loc, pubDate / updated /
// date_published / lastmod) is settled here and nowhere else. Pure and
// synchronous: it runs in a content worker thread (content/worker.ts), so a
// 10,000-item feed costs the service's event loop nothing.
import { XMLParser } from "fast-xml-parser";

import type { SourceKind } from "../../../lib/sources.js";

export type { SourceKind };

export interface FeedItem {
  /** Stable identity: the guid / id, else the link. */
  key: string;
  link?: string;
  title?: string;
  /** The item's full text (HTML) when the feed carries it (content:encoded, Atom content, JSON content_html/text). */
  content?: string;
  /** A teaser (RSS description, Atom summary, JSON summary); never taken for the whole text. */
  summary?: string;
  /** Unix ms of publication (or of the last change where that is all the feed gives). */
  published?: number;
  lang?: string;
}

export interface ParsedFeed {
  kind: SourceKind;
  title?: string;
  lang?: string;
  /** In the feed's order; at most `maxItems`. */
  items: FeedItem[];
  /** Items the feed held in all (more than `items` when it was cut). */
  total: number;
  /** A sitemap index: the sitemaps it lists, newest first by lastmod (a poll reads their items: poll.ts). */
  sitemaps?: string[];
}

/** The body is not a feed of any kind we read; the message says why in words. */
export class FeedParseError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "FeedParseError";
  }
}

const xml = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: "@_",
  // content:encoded, news:title, dc:date … are read by their local names.
  removeNSPrefix: true,
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: true,
  // Feeds in the wild use HTML entities (&nbsp;, &eacute;) and numeric references alike.
  htmlEntities: true,
  isArray: (name) => ["item", "entry", "url", "link", "sitemap", "category"].includes(name),
});

/**
 * A second reading of an Atom feed with XHTML content (`type="xhtml"`): the content element kept
 * as the markup it holds, which the parser above breaks into elements and loses the order of
 * their text. Only feeds that hold such content pay for it.
 */
const xmlKeepingContent = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: "@_",
  removeNSPrefix: true,
  parseTagValue: false,
  trimValues: true,
  htmlEntities: true,
  isArray: (name) => name === "entry",
  stopNodes: ["feed.entry.content"],
});

type Node = Record<string, unknown>;

/** Text of an element however the parser shaped it (plain, with attributes, CDATA). */
function text(v: unknown): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (Array.isArray(v)) return text(v[0]);
  if (typeof v === "string") return v.trim() || undefined;
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  if (typeof v === "object") return text((v as Node)["#text"]);
  return undefined;
}

function date(v: unknown): number | undefined {
  const s = text(v);
  if (!s) return undefined;
  const ms = Date.parse(s);
  return Number.isFinite(ms) ? ms : undefined;
}

const absolute = (href: string | undefined, base: string | undefined): string | undefined => {
  if (!href) return undefined;
  try {
    return new URL(href, base).href;
  } catch {
    return undefined;
  }
};

/** Which kind a body is, from its first element or JSON's version field; undefined when none. */
export function detectKind(body: string): SourceKind | undefined {
  const start = body.replace(/^\uFEFF/, "").trimStart();
  if (start.startsWith("{")) return /"version"\s*:\s*"https:\/\/jsonfeed\.org\/version\//.test(start.slice(0, 4096)) ? "jsonfeed" : undefined;
  // The first element that is not a declaration, comment or processing instruction.
  const root = /<(?![?!])(?:[\w-]+:)?([\w-]+)/.exec(start.slice(0, 65_536))?.[1]?.toLowerCase();
  if (root === "rss" || root === "rdf") return "rss";
  if (root === "feed") return "atom";
  if (root === "urlset" || root === "sitemapindex") return "sitemap";
  return undefined;
}

/** Parses a fetched body as `kind` (detected when absent); keeps the first `maxItems` items. Throws FeedParseError. */
export function parseFeed(body: string, kind?: SourceKind, opts: { maxItems?: number; baseUrl?: string } = {}): ParsedFeed {
  const found = detectKind(body);
  if (!found) throw new FeedParseError("the answer is not RSS, Atom, JSON Feed or a sitemap");
  if (kind && found !== kind) throw new FeedParseError(`expected ${kind} but the answer is ${found}`);
  const max = opts.maxItems ?? Infinity;
  if (found === "jsonfeed") return jsonFeed(body, max, opts.baseUrl);
  let doc: Node;
  try {
    doc = xml.parse(body) as Node;
  } catch (err) {
    throw new FeedParseError(`the XML is malformed: ${err instanceof Error ? err.message.split("\n")[0] : String(err)}`);
  }
  if (found === "rss") return rss(doc, max, opts.baseUrl);
  if (found === "atom") return atom(doc, max, opts.baseUrl, /\btype\s*=\s*["']xhtml["']/.test(body) ? body : undefined);
  return sitemap(doc, max, opts.baseUrl);
}

function keep<T>(list: T[], max: number): { items: T[]; total: number } {
  return { items: list.length > max ? list.slice(0, max) : list, total: list.length };
}

function withKey(item: Omit<FeedItem, "key">, id: string | undefined): FeedItem | undefined {
  const key = id ?? item.link;
  return key ? { key, ...item } : undefined;
}

function rss(doc: Node, max: number, base: string | undefined): ParsedFeed {
  // RSS 2.0 keeps items in <channel>; RSS 1.0 (RDF) beside it.
  const root = (doc.rss ?? doc.RDF) as Node | undefined;
  const channel = (root?.channel ?? {}) as Node;
  const raw = ((channel.item ?? root?.item ?? []) as Node[]).slice(0, max);
  const lang = text(channel.language);
  const items = raw
    .map((i) => {
      const link = absolute(text(i.link), base);
      const guid = text(i.guid);
      return withKey(
        {
          link,
          title: text(i.title),
          content: text(i.encoded),
          summary: text(i.description),
          published: date(i.pubDate) ?? date(i.date) ?? date(i.updated),
          lang: text(i.language) ?? lang,
        },
        guid,
      );
    })
    .filter((i): i is FeedItem => i !== undefined);
  return { kind: "rss", title: text(channel.title), lang, items, total: ((channel.item ?? root?.item ?? []) as unknown[]).length };
}

/** Atom links: the alternate one (or the first without a rel) is the item's page. */
function atomLink(links: unknown, base: string | undefined): string | undefined {
  const list = (Array.isArray(links) ? links : links ? [links] : []) as Array<Node | string>;
  const pick = list.find((l) => typeof l === "object" && (l["@_rel"] === undefined || l["@_rel"] === "alternate")) ?? list[0];
  return absolute(typeof pick === "string" ? pick : text(pick?.["@_href"]), base);
}

/**
 * XHTML content is one `<div>` (RFC 4287 §4.1.3): its inner markup is the HTML, with any namespace
 * prefix of the elements (`<xhtml:p>`) dropped.
 */
function xhtmlOf(raw: unknown): string | undefined {
  const markup = text(raw);
  if (!markup) return undefined;
  const inner = /^<(?:[\w-]+:)?div\b[^>]*>([\s\S]*)<\/(?:[\w-]+:)?div\s*>$/.exec(markup)?.[1] ?? markup;
  return inner.replace(/<(\/?)[\w-]+:(?=[\w-])/g, "<$1").trim() || undefined;
}

/** An entry's full text: HTML or plain text as it stands, XHTML as the markup of its div (`raw`: the content element unparsed). */
function atomContent(content: unknown, raw: unknown): string | undefined {
  const type = typeof content === "object" && content !== null && !Array.isArray(content) ? (content as Node)["@_type"] : undefined;
  if (type === "xhtml") return xhtmlOf(raw);
  return text(content);
}

function atom(doc: Node, max: number, base: string | undefined, xhtmlBody?: string): ParsedFeed {
  const feed = (doc.feed ?? {}) as Node;
  const lang = text(feed["@_lang"]);
  const all = (feed.entry ?? []) as Node[];
  const raw = xhtmlBody === undefined ? [] : ((((xmlKeepingContent.parse(xhtmlBody) as Node).feed as Node | undefined)?.entry ?? []) as Node[]);
  const items = all
    .slice(0, max)
    .map((e, i) =>
      withKey(
        {
          link: atomLink(e.link, base),
          title: text(e.title),
          content: atomContent(e.content, raw[i]?.content),
          summary: text(e.summary),
          published: date(e.published) ?? date(e.updated),
          lang: text(e["@_lang"]) ?? lang,
        },
        text(e.id),
      ),
    )
    .filter((i): i is FeedItem => i !== undefined);
  return { kind: "atom", title: text(feed.title), lang, items, total: all.length };
}

function sitemap(doc: Node, max: number, base: string | undefined): ParsedFeed {
  if (doc.sitemapindex) {
    // Newest first by lastmod (undated ones after, in their order): a poll reads the first few (poll.ts).
    const maps = (((doc.sitemapindex as Node).sitemap ?? []) as Node[])
      .map((s, index) => ({ url: absolute(text(s.loc), base), lastmod: date(s.lastmod) ?? -Infinity, index }))
      .filter((m): m is { url: string; lastmod: number; index: number } => !!m.url)
      .sort((a, b) => b.lastmod - a.lastmod || a.index - b.index);
    return { kind: "sitemap", items: [], total: 0, sitemaps: maps.map((m) => m.url) };
  }
  const all = (((doc.urlset ?? {}) as Node).url ?? []) as Node[];
  const items = all
    .slice(0, max)
    .map((u) => {
      const news = (u.news ?? {}) as Node;
      const publication = (news.publication ?? {}) as Node;
      const link = absolute(text(u.loc), base);
      return withKey({ link, title: text(news.title), published: date(news.publication_date) ?? date(u.lastmod), lang: text(publication.language) }, undefined);
    })
    .filter((i): i is FeedItem => i !== undefined);
  return { kind: "sitemap", items, total: all.length };
}

function jsonFeed(body: string, max: number, base: string | undefined): ParsedFeed {
  let doc: Node;
  try {
    doc = JSON.parse(body) as Node;
  } catch (err) {
    throw new FeedParseError(`the JSON is malformed: ${err instanceof Error ? err.message : String(err)}`);
  }
  const all = Array.isArray(doc.items) ? (doc.items as unknown[]) : [];
  const lang = typeof doc.language === "string" ? doc.language : undefined;
  const str = (v: unknown) => (typeof v === "string" && v.trim() !== "" ? v : undefined);
  const items = all
    .slice(0, max)
    .filter((i): i is Node => typeof i === "object" && i !== null)
    .map((i) =>
      withKey(
        {
          link: absolute(str(i.url) ?? str(i.external_url), base),
          title: str(i.title),
          content: str(i.content_html) ?? str(i.content_text),
          summary: str(i.summary),
          published: date(i.date_published) ?? date(i.date_modified),
          lang: str(i.language) ?? lang,
        },
        str(i.id) ?? (typeof i.id === "number" ? String(i.id) : undefined),
      ),
    )
    .filter((i): i is FeedItem => i !== undefined);
  return { kind: "jsonfeed", title: str(doc.title), lang, items, total: all.length };
}
