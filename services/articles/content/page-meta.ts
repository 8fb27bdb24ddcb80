// What a publisher's page says about itself besides its text: when it was
// published, in which language, and under which URL it wants to be known.
// Read from the parsed page before extraction strips scripts and head
// elements. Pure: the same page always gives the same answer.
import { LANGS, type Lang } from "../../../lib/voices.js";

export interface PageMeta {
  /** ISO 8601 date-time (UTC) of publication, when the page states one. */
  published?: string;
  /** The language tag the page declares (`<html lang>`, else `og:locale`), as written. */
  lang?: string;
  /** Absolute http(s) URL from `<link rel=canonical>`, else `og:url`. */
  canonicalUrl?: string;
}

type Doc = Pick<Document, "querySelector" | "querySelectorAll" | "documentElement">;

/** JSON-LD types whose `datePublished` is the page's own article (not a review or an image on it). */
const ARTICLE_TYPES = /article|posting|report|story|webpage/i;
/** Objects walked in one JSON-LD block: a hostile page cannot make us walk without end. */
const MAX_LD_NODES = 2_000;

export function pageMetaOf(document: Doc, pageUrl?: string): PageMeta {
  const meta: PageMeta = {};
  const published = publishedOf(document);
  if (published) meta.published = published;
  const lang = langOf(document);
  if (lang) meta.lang = lang;
  const canonical = canonicalOf(document, pageUrl);
  if (canonical) meta.canonicalUrl = canonical;
  return meta;
}

function publishedOf(document: Doc): string | undefined {
  const fromLd = jsonLdDate(document);
  if (fromLd) return fromLd;
  for (const sel of ['meta[property="article:published_time"]', 'meta[name="article:published_time"]', 'meta[itemprop="datePublished"]']) {
    const date = isoDateTime(document.querySelector(sel)?.getAttribute("content"));
    if (date) return date;
  }
  // A <time> inside the article says more than one in a sidebar; the first dated one of either otherwise.
  for (const sel of ['[itemprop="datePublished"][datetime]', "article time[datetime]", "main time[datetime]", "time[datetime]"]) {
    for (const el of Array.from(document.querySelectorAll(sel))) {
      const date = isoDateTime(el.getAttribute("datetime"));
      if (date) return date;
    }
  }
  return undefined;
}

function jsonLdDate(document: Doc): string | undefined {
  let fallback: string | undefined;
  for (const script of Array.from(document.querySelectorAll('script[type="application/ld+json"]'))) {
    let data: unknown;
    try {
      data = JSON.parse(script.textContent ?? "");
    } catch {
      continue;
    }
    const stack: unknown[] = [data];
    for (let seen = 0; stack.length > 0 && seen < MAX_LD_NODES; seen++) {
      const node = stack.pop();
      if (Array.isArray(node)) {
        stack.push(...node);
        continue;
      }
      if (node === null || typeof node !== "object") continue;
      const o = node as Record<string, unknown>;
      const date = isoDateTime(typeof o.datePublished === "string" ? o.datePublished : undefined);
      if (date) {
        const types = ([] as unknown[]).concat(o["@type"] ?? []).map(String);
        if (types.some((t) => ARTICLE_TYPES.test(t))) return date;
        fallback ??= date;
      }
      for (const key of ["@graph", "mainEntity", "mainEntityOfPage"]) if (o[key] !== undefined) stack.push(o[key]);
    }
  }
  return fallback;
}

const ISO = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(\.\d+)?)?\s*(Z|[+-]\d{2}:?\d{2})?)?$/i;

/**
 * An ISO 8601 date or date-time as the UTC instant it names; undefined for anything else.
 * Without a zone the time is taken as UTC (the server's zone would make the answer depend on where we run).
 */
export function isoDateTime(value: string | null | undefined): string | undefined {
  const m = ISO.exec((value ?? "").trim());
  if (!m) return undefined;
  const [, y, mo, d, h = "00", mi = "00", s = "00", frac = "", zone = "Z"] = m;
  const z = zone.toUpperCase() === "Z" ? "Z" : zone.length === 5 ? `${zone.slice(0, 3)}:${zone.slice(3)}` : zone;
  const ms = Date.parse(`${y}-${mo}-${d}T${h}:${mi}:${s}${frac.slice(0, 4)}${z}`);
  if (Number.isNaN(ms)) return undefined;
  // Date.parse rolls 2026-02-30 over to March; a date that is not on the calendar is no date (checked at its own offset).
  const offsetMin = z === "Z" ? 0 : (z[0] === "+" ? 1 : -1) * (Number(z.slice(1, 3)) * 60 + Number(z.slice(4, 6)));
  if (new Date(ms + offsetMin * 60_000).toISOString().slice(0, 10) !== `${y}-${mo}-${d}`) return undefined;
  return new Date(ms).toISOString();
}

function langOf(document: Doc): string | undefined {
  const declared = document.documentElement?.getAttribute("lang")?.trim();
  if (declared) return declared;
  const locale = document.querySelector('meta[property="og:locale"]')?.getAttribute("content")?.trim();
  return locale || undefined;
}

/**
 * The voice locales a declared language tag asks for, best first: the same locale ("en-GB",
 * "de_DE"), then the others of its language in the platform's order ("en" → en-GB, en-US).
 * Empty when no voice speaks the language.
 */
export function localesOf(tag: string | undefined): Lang[] {
  const norm = (tag ?? "").trim().replace(/_/g, "-").toLowerCase();
  const primary = norm.split("-")[0];
  if (!primary) return [];
  const same = LANGS.filter((l) => l.toLowerCase().split("-")[0] === primary);
  return [...same.filter((l) => l.toLowerCase() === norm), ...same.filter((l) => l.toLowerCase() !== norm)];
}

function canonicalOf(document: Doc, pageUrl: string | undefined): string | undefined {
  for (const el of Array.from(document.querySelectorAll("link[rel]"))) {
    const rels = (el.getAttribute("rel") ?? "").toLowerCase().split(/\s+/);
    if (!rels.includes("canonical")) continue;
    const href = absoluteHttp(el.getAttribute("href"), pageUrl);
    if (href) return href;
  }
  return absoluteHttp(document.querySelector('meta[property="og:url"]')?.getAttribute("content"), pageUrl);
}

function absoluteHttp(href: string | null | undefined, base: string | undefined): string | undefined {
  const text = (href ?? "").trim();
  if (!text) return undefined;
  try {
    const u = base ? new URL(text, base) : new URL(text);
    return u.protocol === "http:" || u.protocol === "https:" ? u.href : undefined;
  } catch {
    return undefined;
  }
}
