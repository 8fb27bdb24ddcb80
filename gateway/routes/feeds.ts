// Podcast feeds: GET /feeds/{publicKey}.xml is the project's ready articles as
// RSS 2.0 with the iTunes and Podcasting 2.0 namespaces, newest first, in
// pages (RFC 5005 paged feed links), optionally one show per label. Rendered
// feeds are reused for a few seconds and carry ETag/Last-Modified, so podcast
// apps polling an unchanged feed get 304.
import { createHash } from "node:crypto";
import type { Client } from "@connectrpc/connect";
import type { Router } from "@koa/router";
import { XMLBuilder } from "fast-xml-parser";
import type { ListenerArticle, ListenerService } from "../../gen/articles/v1/listener_pb.js";
import type { PlayerService } from "../../gen/auth/v1/player_pb.js";
import type { BlobStore } from "../../lib/blob/port.js";
import { xmlText } from "../../lib/xml-text.js";
import type { PlayerSettings } from "../../services/auth/player-settings.js";
import { HttpError } from "../errors.js";
import { notModified } from "../conditional.js";
import { publicUrl } from "../public-links.js";
import { DEFAULT_LANG } from "../../lib/voices.js";
import { ARTWORK_PATH, serveArtwork } from "../player/artwork.js";
import { baseOf, keyCall, publicCors } from "./player.js";

export interface FeedRoutesOptions {
  player: Client<typeof PlayerService>;
  listener: Client<typeof ListenerService>;
  blobs: BlobStore;
  publicBaseUrl?: string;
  /** Items per page; default 100. */
  pageSize?: number;
  /** How long a rendered page is reused (so also how long a rotated key's feed lingers); default 5 s. */
  reuseMs?: number;
}

const FILE = /^(pk_[A-Za-z0-9_-]{16,64})\.xml$/;
const LABEL = /^[^\u0000-\u001f\u007f]{1,100}$/;
// The Podcasting 2.0 namespace's UUIDv5 namespace for podcast:guid.
const PODCAST_GUID_NAMESPACE = "ead4c236-bf58-58c6-a2c6-a6b28d128cb6";

/** RFC 4122 version 5 UUID (SHA-1, name-based). */
export function uuidV5(name: string, namespace: string): string {
  const h = createHash("sha1").update(Buffer.from(namespace.replace(/-/g, ""), "hex")).update(name, "utf8").digest();
  h[6] = (h[6] & 0x0f) | 0x50;
  h[8] = (h[8] & 0x3f) | 0x80;
  const hex = h.subarray(0, 16).toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** itunes:duration as HH:MM:SS. */
export function clock(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${pad(Math.floor(s / 3600))}:${pad(Math.floor((s % 3600) / 60))}:${pad(s % 60)}`;
}

// Every value passes xmlText: stored titles or settings from older releases may hold what XML cannot carry.
const xmlValue = (_name: string, value: unknown) => (typeof value === "string" ? xmlText(value) : value);
const builder = new XMLBuilder({ ignoreAttributes: false, attributeNamePrefix: "@_", format: true, suppressEmptyNode: true, processEntities: true, tagValueProcessor: xmlValue, attributeValueProcessor: xmlValue });

/**
 * Podcasting 2.0 tags for the revision's captions and chapters; none for revisions rendered before
 * they were recorded. Both caption files are timed per sentence, which is what rel="captions" says;
 * the language is the article's (a feed may mix languages).
 */
export function transcriptTags(a: ListenerArticle, base: string): Record<string, unknown> {
  const t = a.transcript;
  if (!t?.vtt || !t.srt) return {};
  const language = a.lang.toLowerCase();
  return {
    "podcast:transcript": [
      { "@_url": publicUrl(base, t.vtt.url), "@_type": "text/vtt", "@_language": language, "@_rel": "captions" },
      { "@_url": publicUrl(base, t.srt.url), "@_type": "application/x-subrip", "@_language": language, "@_rel": "captions" },
    ],
    ...(t.chapters ? { "podcast:chapters": { "@_url": publicUrl(base, t.chapters.url), "@_type": "application/json+chapters" } } : {}),
  };
}

interface Rendered {
  xml: string;
  etag: string;
  lastModified: Date;
  until: number;
}

export function feedRoutes(router: Router, opts: FeedRoutesOptions): void {
  const pageSize = opts.pageSize ?? 100;
  const reuseMs = opts.reuseMs ?? 5_000;
  const rendered = new Map<string, Rendered>();
  // Files are immutable, so a size once read stays true.
  const sizes = new Map<string, number>();

  async function sizeOf(key: string): Promise<number> {
    const known = sizes.get(key);
    if (known !== undefined) return known;
    const info = await opts.blobs.stat(key);
    const size = info?.size ?? 0;
    if (info) {
      if (sizes.size >= 200_000) sizes.delete(sizes.keys().next().value as string);
      sizes.set(key, size);
    }
    return size;
  }

  async function render(base: string, key: string, label: string | undefined, page: number): Promise<Rendered> {
    const call = { headers: { authorization: `Bearer ${key}` } };
    const [{ player }, list] = await Promise.all([
      opts.player.getPlayer({}, call),
      opts.listener.listListenerArticles({ label, limit: pageSize, offset: (page - 1) * pageSize }, call),
    ]);
    const settings = JSON.parse(player!.settingsJson) as PlayerSettings;
    if (!settings.feed.enabled) throw new HttpError(404, "This project's podcast feed is turned off");
    const total = Number(list.count);
    const lastPage = Math.max(1, Math.ceil(total / pageSize));
    if (page > lastPage) throw new HttpError(404, `The feed has ${lastPage} page(s)`);

    const feedUrl = (p: number) => `${base}/feeds/${key}.xml${label !== undefined || p > 1 ? "?" : ""}${[label !== undefined ? `label=${encodeURIComponent(label)}` : "", p > 1 ? `page=${p}` : ""].filter(Boolean).join("&")}`;
    const show = settings.feed;
    const title = show.title ?? (label ? `${player!.projectName}: ${label}` : player!.projectName);
    const items = await Promise.all(list.articles.map(async (a) => item(a, base, key, await sizeOf(a.audio!.key), show.explicit)));
    const newest = list.articles.reduce((m, a) => Math.max(m, Number(a.updated), Number(a.added)), 0);
    const lastModified = new Date((newest || Math.floor(Date.now() / 1000)) * 1000);
    const links: Array<Record<string, string>> = [{ "@_rel": "self", "@_type": "application/rss+xml", "@_href": feedUrl(page) }];
    if (lastPage > 1) links.push({ "@_rel": "first", "@_href": feedUrl(1) }, { "@_rel": "last", "@_href": feedUrl(lastPage) });
    if (page > 1) links.push({ "@_rel": "previous", "@_href": feedUrl(page - 1) });
    if (page < lastPage) links.push({ "@_rel": "next", "@_href": feedUrl(page + 1) });
    const [cat, sub] = show.category.split("/");
    const artwork = show.imageUrl ?? `${base}${ARTWORK_PATH}`;

    const doc = {
      "?xml": { "@_version": "1.0", "@_encoding": "UTF-8" },
      rss: {
        "@_version": "2.0",
        "@_xmlns:itunes": "http://www.itunes.com/dtds/podcast-1.0.dtd",
        "@_xmlns:podcast": "https://podcastindex.org/namespace/1.0",
        "@_xmlns:atom": "http://www.w3.org/2005/Atom",
        channel: {
          title,
          link: base,
          description: show.description ?? `Articles of ${player!.projectName}, read aloud.`,
          // The show's language, never its newest episode's (a feed of English and German articles must not flip).
          language: (player!.feedLanguage || DEFAULT_LANG).toLowerCase(),
          lastBuildDate: lastModified.toUTCString(),
          generator: "article-audio",
          "atom:link": links,
          "itunes:author": show.author ?? player!.projectName,
          // Apple and Spotify refuse a feed without artwork: a generated one stands in until the project sets its own.
          "itunes:image": { "@_href": artwork },
          image: { url: artwork, title, link: base },
          "itunes:category": sub ? { "@_text": cat, "itunes:category": { "@_text": sub } } : { "@_text": cat },
          "itunes:explicit": show.explicit ? "true" : "false",
          "itunes:type": "episodic",
          ...(show.ownerEmail ? { "itunes:owner": { "itunes:name": show.author ?? player!.projectName, "itunes:email": show.ownerEmail } } : {}),
          "podcast:guid": uuidV5(feedUrl(1).replace(/^[a-z]+:\/\//i, "").replace(/\/+$/, ""), PODCAST_GUID_NAMESPACE),
          "podcast:locked": "no",
          item: items,
        },
      },
    };
    const xml = builder.build(doc) as string;
    return { xml, etag: `"${createHash("sha1").update(xml).digest("base64url")}"`, lastModified, until: Date.now() + reuseMs };
  }

  function item(a: ListenerArticle, base: string, key: string, bytes: number, explicit: boolean): Record<string, unknown> {
    // The feed's key and the duration ride on the enclosure so its requests count as podcast downloads (routes/audio.ts).
    const enclosure = `${publicUrl(base, a.audio!.url)}?feed=${encodeURIComponent(key)}&d=${Math.round(a.audio!.duration)}`;
    return {
      title: a.title,
      guid: { "@_isPermaLink": "false", "#text": a.id },
      // The publication date when the publisher (or its feed) gave one: a back catalogue keeps its real dates.
      pubDate: (a.published ? new Date(a.published) : new Date(Number(a.added) * 1000)).toUTCString(),
      ...(a.url ? { link: a.url } : {}),
      // The article's opening; the title only when the body has no paragraph to offer.
      description: a.summary || a.title,
      enclosure: { "@_url": enclosure, "@_length": String(bytes), "@_type": "audio/mpeg" },
      "itunes:duration": clock(a.audio!.duration),
      "itunes:explicit": explicit ? "true" : "false",
      "itunes:episodeType": "full",
      ...transcriptTags(a, base),
    };
  }

  router.get(ARTWORK_PATH, serveArtwork);

  router.get("/feeds/:file", async (ctx) => {
    publicCors(ctx);
    const m = FILE.exec(ctx.params.file);
    if (!m) throw new HttpError(404, "No such feed: the address is /feeds/{publicKey}.xml");
    const key = m[1];
    keyCall(ctx, key);
    const label = typeof ctx.query.label === "string" ? ctx.query.label : undefined;
    if (label !== undefined && !LABEL.test(label)) throw new HttpError(400, "label: must be 1-100 characters without control characters");
    const pageText = typeof ctx.query.page === "string" ? ctx.query.page : "1";
    if (!/^[1-9][0-9]{0,5}$/.test(pageText)) throw new HttpError(400, "page: must be a whole number from 1");
    const base = baseOf(ctx, opts.publicBaseUrl);
    const cacheKey = `${base} ${key} ${label ?? ""} ${pageText}`;
    let r = rendered.get(cacheKey);
    if (!r || r.until < Date.now()) {
      r = await render(base, key, label, Number(pageText));
      if (rendered.size >= 1_000) rendered.delete(rendered.keys().next().value as string);
      rendered.set(cacheKey, r);
    }
    ctx.set("ETag", r.etag);
    ctx.set("Last-Modified", r.lastModified.toUTCString());
    ctx.set("Cache-Control", "public, max-age=300");
    if (notModified(ctx, r.etag, r.lastModified)) {
      ctx.status = 304;
      return;
    }
    ctx.type = "application/rss+xml; charset=utf-8";
    ctx.body = r.xml;
  });
}
