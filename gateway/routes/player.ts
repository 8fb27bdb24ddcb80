// The listener side of the gateway: publishers read and change their player
// key and settings (bearer token); players, embed pages and podcast apps read
// what is public of ready articles with the project's public key, and post
// listening events. Public endpoints answer any origin (CORS *) and never
// reveal anything but title, language and audio of ready articles.
import { createHash } from "node:crypto";
import type { Client } from "@connectrpc/connect";
import type { Router } from "@koa/router";
import type { Context } from "koa";
import { ListeningEventType, type ListenerArticle, type ListenerService, type ListeningEvent } from "../../gen/articles/v1/listener_pb.js";
import type { Player, PlayerService } from "../../gen/auth/v1/player_pb.js";
import { createExpiringLru } from "../../lib/expiring-lru.js";
import { completeLook, resolveLook, type PlayerLook, type ResolvedLook } from "../../lib/player-look.js";
import { DEFAULT_LANG } from "../../lib/voices.js";
import type { PlayerSettings } from "../../services/auth/player-settings.js";
import { createMemoryBucketStore } from "../../lib/ratelimit/memory.js";
import { CLIENT_NETWORK_HEADER } from "../../lib/rpc/client-network.js";
import { readJsonBody } from "../body.js";
import { clientNetwork } from "../client-network.js";
import { createCoalescer, nextTurn } from "../coalesce.js";
import { notModified } from "../conditional.js";
import type { ListeningBuffer } from "../listening-buffer.js";
import { HttpError } from "../errors.js";
import { PUBLIC_KEY_PATTERN, validateListener } from "../listener-schemas.js";
import { playerAsset } from "../player/asset.js";
import { livePath, type LiveAnnouncements } from "./live-audio.js";
import { embedPage } from "../player/embed.js";
import { baseOf, publicUrl } from "../public-links.js";
import { feedWarnings } from "../player/feed-checks.js";
import { publisherCall } from "../publisher-call.js";

export interface PlayerRoutesOptions {
  player: Client<typeof PlayerService>;
  listener: Client<typeof ListenerService>;
  /** Where accepted listening events wait for their batch (listening-buffer.ts). */
  events: ListeningBuffer;
  /** Base of the links handed out (snippet, feed); default: the request's own origin. */
  publicBaseUrl?: string;
  /** Listening-event batches per second and burst, per key (defaults 20 and 100) and per client address (5 and 50). */
  eventRate?: PlayerEventLimits;
  /** Where the live streams handed out are noted, so the live route waits only for those. */
  live?: LiveAnnouncements;
}

export interface PlayerEventLimits {
  perSecond: number;
  burst: number;
  perAddress?: { perSecond: number; burst: number };
  /** Article lookups (and embed pages) per client address: a lookup can start a render (audio on demand). */
  lookupsPerAddress?: { perSecond: number; burst: number };
}

const EVENTS_MAX_BYTES = 16 * 1024;
/**
 * A player polls its lookup while audio on demand is made (4/s until the preview, then 1/s):
 * one listener stays well inside this; one address looking up every article of a project does not.
 */
const DEFAULT_LOOKUPS = { perSecond: 5, burst: 60 };

/** Listening-event limits per player key and per client address, in each gateway replica (docs/player.md). */
export const PLAYER_VARS = {
  PLAYER_EVENTS_PER_SECOND: { type: "number", minimum: 0.1, maximum: 100_000, default: 20, description: "listening-event batches per second per player key (each gateway replica)" },
  PLAYER_EVENTS_BURST: { type: "integer", minimum: 1, maximum: 1_000_000, default: 100, description: "listening-event burst per player key" },
  PLAYER_EVENTS_PER_ADDRESS_PER_SECOND: { type: "number", minimum: 0.1, maximum: 100_000, default: 5, description: "listening-event batches per second per client address (an IPv6 client: its /64), whatever the key (each gateway replica; kept in memory only)" },
  PLAYER_EVENTS_PER_ADDRESS_BURST: { type: "integer", minimum: 1, maximum: 1_000_000, default: 50, description: "listening-event burst per client address" },
  PLAYER_LOOKUPS_PER_ADDRESS_PER_SECOND: { type: "number", minimum: 0.1, maximum: 100_000, default: DEFAULT_LOOKUPS.perSecond, description: "player article lookups and embed pages per second per client address (an IPv6 client: its /64), whatever the key (each gateway replica; kept in memory only)" },
  PLAYER_LOOKUPS_PER_ADDRESS_BURST: { type: "integer", minimum: 1, maximum: 1_000_000, default: DEFAULT_LOOKUPS.burst, description: "player article lookup burst per client address" },
} as const;

export function playerEventLimits(cfg: {
  PLAYER_EVENTS_PER_SECOND: number;
  PLAYER_EVENTS_BURST: number;
  PLAYER_EVENTS_PER_ADDRESS_PER_SECOND: number;
  PLAYER_EVENTS_PER_ADDRESS_BURST: number;
  PLAYER_LOOKUPS_PER_ADDRESS_PER_SECOND: number;
  PLAYER_LOOKUPS_PER_ADDRESS_BURST: number;
}): PlayerEventLimits {
  return {
    perSecond: cfg.PLAYER_EVENTS_PER_SECOND,
    burst: cfg.PLAYER_EVENTS_BURST,
    perAddress: { perSecond: cfg.PLAYER_EVENTS_PER_ADDRESS_PER_SECOND, burst: cfg.PLAYER_EVENTS_PER_ADDRESS_BURST },
    lookupsPerAddress: { perSecond: cfg.PLAYER_LOOKUPS_PER_ADDRESS_PER_SECOND, burst: cfg.PLAYER_LOOKUPS_PER_ADDRESS_BURST },
  };
}

const KEY = new RegExp(PUBLIC_KEY_PATTERN);

// Feeds and oEmbed take the base of their links from here too.
export { baseOf };

export function publicCors(ctx: Context): void {
  ctx.set("Access-Control-Allow-Origin", "*");
  ctx.set("Access-Control-Expose-Headers", "ETag, Content-Length, Content-Range, Retry-After");
  // Added to, not set: an answer whose links follow the request also varies by Host (public-links.ts).
  ctx.vary("Accept-Encoding");
}

export function keyCall(ctx: Context, key: unknown): { headers: { authorization: string; "x-request-id": string; [name: string]: string } } {
  if (typeof key !== "string" || !KEY.test(key)) throw new HttpError(400, "key: must be a public player key (pk_…)");
  return { headers: { authorization: `Bearer ${key}`, "x-request-id": ctx.state.requestId } };
}

export function snippetFor(base: string, key: string): string {
  return `<script src="${base}/player/v1/player.js" async></script>\n<article-audio-player key="${key}"></article-audio-player>`;
}

function playerJson(base: string, p: Player | undefined): Record<string, unknown> {
  if (!p) throw new HttpError(502, "The auth service answered without a player");
  const settings = JSON.parse(p.settingsJson) as PlayerSettings;
  return {
    result: "ok",
    publicKey: p.publicKey,
    settings,
    snippet: snippetFor(base, p.publicKey),
    scriptUrl: `${base}/player/v1/player.js`,
    feedUrl: `${base}/feeds/${p.publicKey}.xml`,
    feedLanguage: p.feedLanguage || DEFAULT_LANG,
    warnings: feedWarnings(settings.feed),
    oembedHosts: p.oembedHosts.map((h) => ({
      host: h.host,
      status: h.status,
      reason: h.reason || null,
      checkedAt: h.checkedAt || null,
      verifiedAt: h.verifiedAt || null,
      verificationUrl: `https://${h.host}/.well-known/article-audio.txt`,
    })),
  };
}

/** What the player shows: nothing that is not public. */
export function listenerArticleJson(a: ListenerArticle, base: string): Record<string, unknown> {
  const out: Record<string, unknown> = { id: a.id, title: a.title, lang: a.lang, url: a.url ?? null, revision: Number(a.revision) };
  if (a.audio) Object.assign(out, { audio: publicUrl(base, a.audio.url), audio_duration: a.audio.duration });
  if (a.audioPreview) Object.assign(out, { audio_preview: publicUrl(base, a.audioPreview.url), audio_preview_duration: a.audioPreview.duration });
  if (a.pending) out.pending = true;
  // Made on demand and not finished: the audio as it is made, to start on at once (live-audio.ts).
  if (a.pending && !a.audio) out.audio_live = publicUrl(base, livePath(a.id, a.revision));
  // Read-along: the timed segments the player follows the text with, and captions for a <track>.
  if (a.transcript?.segments && a.transcript.vtt) Object.assign(out, { segments: publicUrl(base, a.transcript.segments.url), transcript: publicUrl(base, a.transcript.vtt.url) });
  return out;
}

const EVENT_TYPES: Record<string, ListeningEventType> = {
  impression: ListeningEventType.IMPRESSION,
  play: ListeningEventType.PLAY,
  progress: ListeningEventType.PROGRESS,
  complete: ListeningEventType.COMPLETE,
  listen: ListeningEventType.LISTEN,
};

/** Listening time one beacon can report per article (the player sends at most this since its previous beacon). */
const MAX_SECONDS_PER_BEACON = 600;

type BeaconEvent = { type: string; articleId: string; percent?: number; seconds?: number };

/**
 * A beacon comes from one player, which shows an article once, plays it once
 * and passes each mark once: per article, each kind of event counts once (a
 * progress of 100 % is the completion) and the listening time adds up to at
 * most MAX_SECONDS_PER_BEACON. So one beacon can never claim many listeners.
 */
export function oneListener(events: BeaconEvent[], source = "player"): Omit<ListeningEvent, "$typeName">[] {
  const out: Omit<ListeningEvent, "$typeName">[] = [];
  const seen = new Set<string>();
  const byArticle = new Map<string, { first?: Omit<ListeningEvent, "$typeName">; seconds: number }>();
  for (const e of events) {
    let a = byArticle.get(e.articleId);
    if (!a) byArticle.set(e.articleId, (a = { seconds: 0 }));
    a.seconds = Math.min(MAX_SECONDS_PER_BEACON, a.seconds + (e.seconds ?? 0));
    const kind = e.type === "progress" ? (e.percent === 100 ? "complete" : `progress${e.percent}`) : e.type;
    if (e.type === "listen" || seen.has(`${kind}|${e.articleId}`)) continue;
    seen.add(`${kind}|${e.articleId}`);
    const event = { articleId: e.articleId, type: EVENT_TYPES[e.type], percent: e.percent ?? 0, seconds: 0, source };
    a.first ??= event;
    out.push(event);
  }
  // Each article's time rides on its first event, or on one listen event: never more events than were sent.
  for (const [articleId, a] of byArticle) {
    if (a.seconds <= 0) continue;
    if (a.first) a.first.seconds = a.seconds;
    else out.push({ articleId, type: ListeningEventType.LISTEN, percent: 0, seconds: a.seconds, source });
  }
  return out;
}

const unknownKey = () => new HttpError(401, "Invalid player key");

export function playerRoutes(router: Router, opts: PlayerRoutesOptions): void {
  const { player, listener } = opts;
  // Per key, in this gateway replica: a stray or hostile page cannot flood the aggregator.
  const eventBuckets = createMemoryBucketStore();
  const eventPolicy = { perSecond: opts.eventRate?.perSecond ?? 20, burst: opts.eventRate?.burst ?? 100 };
  // Per client address, checked first: one flooding client spends its own bucket, not its key's,
  // so the key's other listeners keep theirs. Held in this process's memory only, never stored or logged.
  const addressBuckets = createMemoryBucketStore();
  const addressPolicy = opts.eventRate?.perAddress ?? { perSecond: 5, burst: 50 };
  const lookups = createCoalescer<{ etag: string; json: string }>();
  // Lookups can start renders (audio on demand): per client address, in memory only, never stored or logged.
  const lookupBuckets = createMemoryBucketStore();
  const lookupPolicy = opts.eventRate?.lookupsPerAddress ?? DEFAULT_LOOKUPS;
  const lookupAllowed = async (ctx: Context) => {
    const taken = await lookupBuckets.take(clientNetwork(ctx.ip), 1, lookupPolicy);
    if (taken.granted === 0) throw new HttpError(429, "Too many player lookups from this address; slow down", { "Retry-After": String(Math.ceil(taken.retryAfterMs / 1000)) });
  };

  // The project's look rides on every lookup, so a design change reaches every embed without the
  // publisher's page changing; kept a few seconds per key (the lookups' own key cache is as short).
  const looks = createExpiringLru<ResolvedLook | null>({ max: 10_000, ttlMs: 5_000 });
  const lookOf = async (key: string, call: { headers: Record<string, string> }): Promise<ResolvedLook | null> => {
    const hit = looks.get(key);
    if (hit !== undefined) return hit;
    const { player: p } = await player.getPlayer({}, call);
    const r = resolveLook(completeLook((JSON.parse(p!.settingsJson) as { look?: PlayerLook }).look));
    // The built-in look needs no words: answers stay as they were for projects that set none.
    const look = Object.keys(r.vars).length || r.layout !== "full" || r.hide.length ? r : null;
    looks.set(key, look);
    return look;
  };

  // The links' base is taken first: a Host it refuses (400) must leave the settings and the key as they were.
  router.get("/api/player", async (ctx) => {
    const call = publisherCall(ctx);
    const base = baseOf(ctx, opts.publicBaseUrl);
    const res = await player.getPlayer({}, call);
    ctx.body = playerJson(base, res.player);
  });

  router.put("/api/player", async (ctx) => {
    const call = publisherCall(ctx);
    const base = baseOf(ctx, opts.publicBaseUrl);
    const body = await readJsonBody(ctx, EVENTS_MAX_BYTES * 4);
    validateListener.playerSettings(body);
    const res = await player.updatePlayer({ settingsJson: JSON.stringify(body) }, call);
    ctx.body = playerJson(base, res.player);
  });

  router.post("/api/player/verify", async (ctx) => {
    const call = publisherCall(ctx);
    const base = baseOf(ctx, opts.publicBaseUrl);
    const res = await player.verifyOembedHosts({}, call);
    ctx.body = playerJson(base, res.player);
  });

  router.post("/api/player/rotate", async (ctx) => {
    const call = publisherCall(ctx);
    const base = baseOf(ctx, opts.publicBaseUrl);
    const res = await player.rotatePlayerKey({}, call);
    ctx.body = playerJson(base, res.player);
  });

  router.options(/^\/player\/v1\//, (ctx) => {
    publicCors(ctx);
    ctx.set("Access-Control-Allow-Methods", "GET, POST, OPTIONS");
    ctx.set("Access-Control-Allow-Headers", "Content-Type");
    ctx.set("Access-Control-Max-Age", "86400");
    ctx.status = 204;
  });

  router.get("/player/v1/player.js", (ctx) => {
    publicCors(ctx);
    playerAsset.serve(ctx);
  });

  router.get("/player/v1/article", async (ctx) => {
    publicCors(ctx);
    const q = ctx.query;
    const call = keyCall(ctx, q.key);
    const pick = (name: string) => (typeof q[name] === "string" && q[name] !== "" ? (q[name] as string) : undefined);
    const [id, externalId, url] = [pick("id"), pick("externalId"), pick("url")];
    const lookup = id ? { case: "id" as const, value: id } : externalId ? { case: "externalId" as const, value: externalId } : url ? { case: "url" as const, value: url } : undefined;
    if (!lookup) throw new HttpError(400, "query: one of id, externalId or url is required");
    await lookupAllowed(ctx);
    // The articles service bounds the renders one client's lookups start (audio on demand); in its memory only.
    call.headers[CLIENT_NETWORK_HEADER] = clientNetwork(ctx.ip);
    const base = baseOf(ctx, opts.publicBaseUrl);
    // Identical lookups in flight (every reader of one page) share one upstream call; the key is in the query, the links' base too.
    const found = await lookups.run(`${base} ${ctx.path}?${ctx.querystring}`, async () => {
      const [{ article: a }, look] = await Promise.all([listener.getListenerArticle({ lookup }, call), lookOf(q.key as string, call)]);
      if (a!.pending && !a!.audio) opts.live?.announce(a!.id, a!.revision);
      // While audio is made on demand the answer changes without a new revision: its tag says how far it got.
      const stage = a!.pending ? (a!.audioPreview ? ".preview" : ".pending") : "";
      const json = JSON.stringify({ result: "ok", article: { ...listenerArticleJson(a!, base), ...(look ? { look } : {}) } });
      const styled = look ? `.${createHash("sha1").update(JSON.stringify(look)).digest("base64url").slice(0, 10)}` : "";
      return { etag: `"${a!.id}.${a!.revision}${stage}${styled}"`, json };
    });
    // Revalidated on every page load, so a new revision's audio shows at once; unchanged answers are a 304.
    ctx.set("Cache-Control", "no-cache");
    ctx.set("ETag", found.etag);
    if (notModified(ctx, found.etag)) {
      ctx.status = 304;
      return;
    }
    ctx.type = "json";
    ctx.body = found.json;
  });

  router.post("/player/v1/events", async (ctx) => {
    publicCors(ctx);
    // sendBeacon posts text/plain (no CORS preflight); the body is JSON all the same.
    const body = await readJsonBody(ctx, EVENTS_MAX_BYTES, { acceptText: true });
    validateListener.events(body);
    const batch = body as { key: string; source?: string; events: BeaconEvent[] };
    const retry = (ms: number) => ({ "Retry-After": String(Math.ceil(ms / 1000)) });
    const fromHere = await addressBuckets.take(clientNetwork(ctx.ip), 1, addressPolicy);
    if (fromHere.granted === 0) throw new HttpError(429, "Too many listening events from this address; slow down", retry(fromHere.retryAfterMs));
    if (opts.events.isUnknown(batch.key)) throw unknownKey();
    const taken = await eventBuckets.take(batch.key, 1, eventPolicy);
    if (taken.granted === 0) throw new HttpError(429, "Too many listening events for this key; slow down", retry(taken.retryAfterMs));
    if ((await opts.events.add(batch.key, oneListener(batch.events, batch.source))) === "unknown-key") throw unknownKey();
    await nextTurn();
    ctx.status = 204;
  });

  router.get("/player/v1/embed/:key/:articleId", async (ctx) => {
    const call = keyCall(ctx, ctx.params.key);
    await lookupAllowed(ctx);
    call.headers[CLIENT_NETWORK_HEADER] = clientNetwork(ctx.ip);
    const res = await listener.getListenerArticle({ lookup: { case: "id", value: ctx.params.articleId } }, call);
    ctx.type = "html";
    ctx.set("Cache-Control", "public, max-age=60");
    // Meant for iframes on any site.
    ctx.set("Content-Security-Policy", "frame-ancestors *");
    ctx.body = embedPage(baseOf(ctx, opts.publicBaseUrl), ctx.params.key, res.article!);
  });
}
