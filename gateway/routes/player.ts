// The listener side of the gateway: publishers read and change their player
// key and settings (bearer token); players, embed pages and podcast apps read
// what is public of ready articles with the project's public key, and post
// listening events. Public endpoints answer any origin (CORS *) and never
// reveal anything but title, language and audio of ready articles.
import type { Client } from "@connectrpc/connect";
import type { Router } from "@koa/router";
import type { Context } from "koa";
import { ListeningEventType, type ListenerArticle, type ListenerService } from "../../gen/articles/v1/listener_pb.js";
import type { Player, PlayerService } from "../../gen/auth/v1/player_pb.js";
import { createMemoryBucketStore } from "../../lib/ratelimit/memory.js";
import { bearerTokenOf } from "../../lib/rpc/caller.js";
import { readJsonBody } from "../body.js";
import { createCoalescer, nextTurn } from "../coalesce.js";
import { notModified } from "../conditional.js";
import type { ListeningBuffer } from "../listening-buffer.js";
import { HttpError } from "../errors.js";
import { PUBLIC_KEY_PATTERN, validateListener } from "../listener-schemas.js";
import { playerAsset } from "../player/asset.js";
import { embedPage } from "../player/embed.js";

export interface PlayerRoutesOptions {
  player: Client<typeof PlayerService>;
  listener: Client<typeof ListenerService>;
  /** Where accepted listening events wait for their batch (listening-buffer.ts). */
  events: ListeningBuffer;
  /** Base of the links handed out (snippet, feed); default: the request's own origin. */
  publicBaseUrl?: string;
  /** Listening-event batches per second per key, and the burst; defaults 20 and 100. */
  eventRate?: { perSecond: number; burst: number };
}

const EVENTS_MAX_BYTES = 16 * 1024;

/** Listening-event limits per player key and gateway replica (docs/player.md). */
export const PLAYER_VARS = {
  PLAYER_EVENTS_PER_SECOND: { type: "number", minimum: 0.1, maximum: 100_000, default: 20, description: "listening-event batches per second per player key (each gateway replica)" },
  PLAYER_EVENTS_BURST: { type: "integer", minimum: 1, maximum: 1_000_000, default: 100, description: "listening-event burst per player key" },
} as const;
const KEY = new RegExp(PUBLIC_KEY_PATTERN);

/** Koa 3's ctx.origin is the Origin request header; the base is this server as the client addressed it. */
export const baseOf = (ctx: Context, configured?: string) => (configured ?? `${ctx.protocol}://${ctx.host}`).replace(/\/+$/, "");

export function publicCors(ctx: Context): void {
  ctx.set("Access-Control-Allow-Origin", "*");
  ctx.set("Access-Control-Expose-Headers", "ETag, Content-Length, Content-Range, Retry-After");
  ctx.set("Vary", "Accept-Encoding");
}

function bearer(ctx: Context): { headers: { authorization: string; "x-request-id": string } } {
  const authorization = ctx.get("Authorization");
  bearerTokenOf(authorization);
  return { headers: { authorization, "x-request-id": ctx.state.requestId } };
}

export function keyCall(ctx: Context, key: unknown): { headers: { authorization: string; "x-request-id": string } } {
  if (typeof key !== "string" || !KEY.test(key)) throw new HttpError(400, "key: must be a public player key (pk_…)");
  return { headers: { authorization: `Bearer ${key}`, "x-request-id": ctx.state.requestId } };
}

export function snippetFor(base: string, key: string): string {
  return `<script src="${base}/player/v1/player.js" async></script>\n<article-audio-player key="${key}"></article-audio-player>`;
}

function playerJson(base: string, p: Player | undefined): Record<string, unknown> {
  if (!p) throw new HttpError(502, "The auth service answered without a player");
  return {
    result: "ok",
    publicKey: p.publicKey,
    settings: JSON.parse(p.settingsJson),
    snippet: snippetFor(base, p.publicKey),
    scriptUrl: `${base}/player/v1/player.js`,
    feedUrl: `${base}/feeds/${p.publicKey}.xml`,
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
export function listenerArticleJson(a: ListenerArticle): Record<string, unknown> {
  const out: Record<string, unknown> = { id: a.id, title: a.title, lang: a.lang, url: a.url ?? null, revision: Number(a.revision) };
  if (a.audio) Object.assign(out, { audio: a.audio.url, audio_duration: a.audio.duration });
  if (a.audioPreview) Object.assign(out, { audio_preview: a.audioPreview.url, audio_preview_duration: a.audioPreview.duration });
  return out;
}

const EVENT_TYPES: Record<string, ListeningEventType> = {
  impression: ListeningEventType.IMPRESSION,
  play: ListeningEventType.PLAY,
  progress: ListeningEventType.PROGRESS,
  complete: ListeningEventType.COMPLETE,
  listen: ListeningEventType.LISTEN,
};

export function playerRoutes(router: Router, opts: PlayerRoutesOptions): void {
  const { player, listener } = opts;
  // Per key, in this gateway replica: a stray or hostile page cannot flood the aggregator.
  const eventBuckets = createMemoryBucketStore();
  const eventPolicy = { perSecond: opts.eventRate?.perSecond ?? 20, burst: opts.eventRate?.burst ?? 100 };
  const lookups = createCoalescer<{ etag: string; json: string }>();

  router.get("/api/player", async (ctx) => {
    const res = await player.getPlayer({}, bearer(ctx));
    ctx.body = playerJson(baseOf(ctx, opts.publicBaseUrl), res.player);
  });

  router.put("/api/player", async (ctx) => {
    const call = bearer(ctx);
    const body = await readJsonBody(ctx, EVENTS_MAX_BYTES * 4);
    validateListener.playerSettings(body);
    const res = await player.updatePlayer({ settingsJson: JSON.stringify(body) }, call);
    ctx.body = playerJson(baseOf(ctx, opts.publicBaseUrl), res.player);
  });

  router.post("/api/player/verify", async (ctx) => {
    const res = await player.verifyOembedHosts({}, bearer(ctx));
    ctx.body = playerJson(baseOf(ctx, opts.publicBaseUrl), res.player);
  });

  router.post("/api/player/rotate", async (ctx) => {
    const res = await player.rotatePlayerKey({}, bearer(ctx));
    ctx.body = playerJson(baseOf(ctx, opts.publicBaseUrl), res.player);
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
    // Identical lookups in flight (every reader of one page) share one upstream call; the key is in the query.
    const found = await lookups.run(`${ctx.path}?${ctx.querystring}`, async () => {
      const a = (await listener.getListenerArticle({ lookup }, call)).article!;
      return { etag: `"${a.id}.${a.revision}"`, json: JSON.stringify({ result: "ok", article: listenerArticleJson(a) }) };
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
    const batch = body as { key: string; events: Array<{ type: string; articleId: string; percent?: number; seconds?: number }> };
    const taken = await eventBuckets.take(batch.key, 1, eventPolicy);
    if (taken.granted === 0) throw new HttpError(429, "Too many listening events for this key; slow down", { "Retry-After": String(Math.ceil(taken.retryAfterMs / 1000)) });
    opts.events.add(batch.key, batch.events.map((e) => ({ articleId: e.articleId, type: EVENT_TYPES[e.type], percent: e.percent ?? 0, seconds: e.seconds ?? 0 })));
    await nextTurn();
    ctx.status = 204;
  });

  router.get("/player/v1/embed/:key/:articleId", async (ctx) => {
    const call = keyCall(ctx, ctx.params.key);
    const res = await listener.getListenerArticle({ lookup: { case: "id", value: ctx.params.articleId } }, call);
    ctx.type = "html";
    ctx.set("Cache-Control", "public, max-age=60");
    // Meant for iframes on any site.
    ctx.set("Content-Security-Policy", "frame-ancestors *");
    ctx.body = embedPage(baseOf(ctx, opts.publicBaseUrl), ctx.params.key, res.article!);
  });
}
