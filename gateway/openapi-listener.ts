// OpenAPI paths and schemas of the listener side (player key and settings,
// the public player endpoints, feeds, oEmbed, statistics). Merged into the
// document by openapi.ts; the schemas are the ones that validate requests.
import { ListeningEvents, PlayerResult, PlayerSettings, StatsQuery, StatsResult, PUBLIC_KEY_PATTERN } from "./listener-schemas.js";

type Json = Record<string, unknown>;

const schemaRef = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const responseRef = (name: string) => ({ $ref: `#/components/responses/${name}` });
const json = (name: string) => ({ "application/json": { schema: schemaRef(name) } });
const ok = (description: string, name: string) => ({ "200": { description, content: json(name) } });
const std = (...names: string[]) => Object.fromEntries(names.map((n) => [STATUS[n], responseRef(n)]));
const STATUS: Record<string, string> = {
  BadRequest: "400",
  Unauthorized: "401",
  Forbidden: "403",
  NotFound: "404",
  PayloadTooLarge: "413",
  UnsupportedMediaType: "415",
  TooManyRequests: "429",
  InternalError: "500",
  Unavailable: "503",
  GatewayTimeout: "504",
  InsufficientStorage: "507",
};
/** Any call that reaches a backing service may meet these. */
const UPSTREAM = ["InternalError", "Unavailable", "GatewayTimeout"];
/** Endpoints under /api count against the project's rate limits (docs/limits.md). */
const PUBLISHER = ["Unauthorized", "TooManyRequests", ...UPSTREAM];
// Examples make "Try it out" fill every field; the key is a placeholder to replace with GET /api/player's.
const EXAMPLE_KEY = "pk_yourPublicPlayerKey0";
const EVENTS_EXAMPLE = { key: EXAMPLE_KEY, events: [{ type: "play", articleId: "council-approves-library-budget-k3j9x0qa", seconds: 12.5 }, { type: "progress", articleId: "council-approves-library-budget-k3j9x0qa", percent: 25 }] };
const keyParam = (where: "query" | "path") => ({ name: "key", in: where, required: true, description: "The project's public player key (GET /api/player).", schema: { type: "string", pattern: PUBLIC_KEY_PATTERN }, example: EXAMPLE_KEY });

export const LISTENER_SCHEMAS: Record<string, Json> = {
  PlayerSettings,
  PlayerResult,
  ListeningEvents,
  StatsResult,
  ListenerArticleResult: {
    type: "object",
    required: ["result", "article"],
    properties: {
      result: { const: "ok" },
      article: {
        type: "object",
        // audio and audio_duration are there unless `pending` (audio on demand still being made).
        required: ["id", "title", "lang"],
        properties: {
          id: { type: "string" },
          title: { type: "string" },
          lang: { type: "string" },
          url: { type: ["string", "null"] },
          revision: { type: "integer" },
          audio: { type: "string" },
          audio_duration: { type: "number" },
          audio_preview: { type: "string" },
          audio_preview_duration: { type: "number" },
          pending: { type: "boolean", description: "Audio on demand: this lookup (or an earlier one) asked for the audio, which is being made. audio_preview appears first, then audio; look again every second or so." },
          audio_live: { type: "string", description: "Audio on demand, while pending: the audio as it is made, a progressive MP3 (GET /player/v1/live/{articleId}/{revision}.mp3) to start playing on at once. Its timeline is the full file's: continue in audio from the same place once it appears." },
          segments: { type: "string", description: "Read-along: URL of the ready revision's timed segments (the JSON of GET /api/articles/{articleId}/segments, served without a token beside the audio). Absent for revisions rendered before segments were recorded." },
          transcript: { type: "string", description: "URL of the ready revision's WebVTT captions (one cue per sentence), for a <track>. Present exactly when segments is." },
          look: {
            type: "object",
            description: "The project's player design (settings.look), resolved: CSS custom properties for the player, its layout and the controls it hides. Absent while the project keeps the built-in look.",
            required: ["vars", "layout", "hide"],
            properties: {
              vars: { type: "object", additionalProperties: { type: "string" }, description: "e.g. {\"--aap-accent\": \"#0b57d0\"}" },
              layout: { enum: ["full", "compact"] },
              hide: { type: "array", items: { enum: ["seek", "time", "back", "speed"] } },
            },
          },
        },
      },
    },
  },
  OembedResult: {
    type: "object",
    required: ["version", "type", "html", "width", "height"],
    properties: { version: { const: "1.0" }, type: { const: "rich" }, title: { type: "string" }, provider_name: { type: "string" }, html: { type: "string" }, width: { type: "integer" }, height: { type: "integer" }, cache_age: { type: "integer" } },
  },
};

const STATS_EXAMPLES: Record<string, string> = { from: "2026-11-01", to: "2026-11-30" };
const statsParams = Object.entries(StatsQuery.properties as Record<string, Json>).map(([name, s]) => {
  const { description, ...schema } = s;
  return { name, in: "query", required: false, description, schema, example: STATS_EXAMPLES[name] };
});
const articleIdParam = { name: "articleId", in: "path", required: true, schema: { type: "string" }, example: "council-approves-library-budget-k3j9x0qa" };

export function listenerPaths(): Json {
  const tags = ["listener"];
  return {
    "/api/player": {
      get: { operationId: "getPlayer", tags, summary: "The project's public player key, embed snippet, feed URL and player settings (read or full token)", responses: { ...ok("Key, snippet and settings.", "PlayerResult"), ...std("BadRequest", ...PUBLISHER) } },
      put: {
        operationId: "updatePlayer",
        tags,
        summary: "Replaces the player settings: podcast feed and oEmbed (full token)",
        requestBody: { required: true, content: { "application/json": { schema: schemaRef("PlayerSettings"), example: { feed: { title: "Acme News, read aloud", description: "Our articles as audio.", imageUrl: "https://news.example/podcast.png", author: "Acme News", category: "News/Daily News", explicit: false }, oembed: { enabled: true, hosts: ["news.example"] } } } } },
        responses: { ...ok("The stored settings.", "PlayerResult"), ...std("BadRequest", "Forbidden", "PayloadTooLarge", "UnsupportedMediaType", "InsufficientStorage", ...PUBLISHER) },
      },
    },
    "/api/player/verify": {
      post: { operationId: "verifyOembedHosts", tags, summary: "Checks every claimed oEmbed host now: its /.well-known/article-audio.txt must list the public key (full token)", responses: { ...ok("Key, settings and each host's verification.", "PlayerResult"), ...std("BadRequest", "Forbidden", ...PUBLISHER) } },
    },
    "/api/player/rotate": {
      post: { operationId: "rotatePlayerKey", tags, summary: "Replaces the public player key; the old one stops working within seconds (full token)", responses: { ...ok("The new key.", "PlayerResult"), ...std("BadRequest", "Forbidden", "InsufficientStorage", ...PUBLISHER) } },
    },
    "/api/articles/{articleId}/stats": {
      parameters: [articleIdParam, ...statsParams],
      get: { operationId: "getArticleStats", tags, summary: "Daily listening figures of one article (read or full token)", responses: { ...ok("Totals and days.", "StatsResult"), ...std("BadRequest", "NotFound", ...PUBLISHER) } },
    },
    "/api/stats": {
      parameters: statsParams,
      get: { operationId: "getProjectStats", tags, summary: "Daily listening figures of the project and its most played articles (read or full token)", responses: { ...ok("Totals, days and articles.", "StatsResult"), ...std("BadRequest", ...PUBLISHER) } },
    },
    "/player/v1/player.js": {
      get: { operationId: "getPlayerScript", tags, security: [], summary: "The embeddable player (a web component, <15 KB gzipped)", responses: { "200": { description: "JavaScript.", content: { "application/javascript": { schema: { type: "string" } } } }, "304": { description: "Not modified." } } },
    },
    "/player/v1/article": {
      parameters: [
        keyParam("query"),
        { name: "id", in: "query", required: false, description: "One of id, externalId or url finds the article.", schema: { type: "string" }, example: "council-approves-library-budget-k3j9x0qa" },
        { name: "externalId", in: "query", required: false, description: "One of id, externalId or url finds the article.", schema: { type: "string" }, example: "cms-4711" },
        { name: "url", in: "query", required: false, description: "One of id, externalId or url finds the article. The URL may be written as an IRI or percent-encoded, with any case of scheme and host: it is matched in its normalised form.", schema: { type: "string" }, example: "https://news.example.com/2026/11/library-budget" },
      ],
      get: { operationId: "getListenerArticle", tags, security: [], summary: "What a listener may see of one ready article: title, language, audio (CORS: any origin)", description: "An article of a project that makes audio on demand is not ready until someone asks: this lookup asks for it, and answers `pending: true` (with `audio_preview` once the preview exists) until the audio is ready. 429 (with Retry-After): too many lookups from this client address (5/s, burst 60, per gateway replica), or the render cannot be started now (the project's on-demand budget or this address's share of it is used up: \"Audio not available yet\"; the article keeps waiting; docs/player.md).", responses: { ...ok("The article.", "ListenerArticleResult"), "304": { description: "Not modified (If-None-Match matched)." }, ...std("BadRequest", "Unauthorized", "NotFound", "TooManyRequests", ...UPSTREAM) } },
    },
    "/player/v1/events": {
      post: {
        operationId: "postListeningEvents",
        tags,
        security: [],
        summary: "A batch of listening events from a player (navigator.sendBeacon; text/plain or application/json; at most 50 events, 16 KB)",
        description:
          "One batch speaks for one player: per article, each kind of event counts once and listening time adds up to at most 600 s. " +
          "Per article and day, completions and quartiles never exceed plays, and listening time never exceeds plays × the audio's duration × 2; what exceeds is dropped. " +
          "401: the key does not exist. 429 (with Retry-After): too many batches from this client address (5/s, burst 50) or for this key (20/s, burst 100), per gateway replica.",
        requestBody: {
          required: true,
          content: {
            "application/json": { schema: schemaRef("ListeningEvents"), example: EVENTS_EXAMPLE },
            "text/plain": { schema: schemaRef("ListeningEvents"), example: EVENTS_EXAMPLE },
          },
        },
        responses: { "204": { description: "Taken." }, ...std("BadRequest", "Unauthorized", "PayloadTooLarge", "UnsupportedMediaType", "TooManyRequests", ...UPSTREAM) },
      },
    },
    "/player/v1/embed/{key}/{articleId}": {
      parameters: [keyParam("path"), articleIdParam],
      get: { operationId: "getEmbedPage", tags, security: [], summary: "A standalone page with the player, for iframes", description: "Counted against the client address's lookups, and may ask for audio on demand as a lookup does (429 likewise).", responses: { "200": { description: "HTML.", content: { "text/html": { schema: { type: "string" } } } }, ...std("BadRequest", "Unauthorized", "NotFound", "TooManyRequests", ...UPSTREAM) } },
    },
    "/player/v1/live/{articleId}/{file}": {
      parameters: [articleIdParam, { name: "file", in: "path", required: true, description: "The revision, as `<revision>.mp3`.", schema: { type: "string", pattern: "^[0-9]{1,15}\\.mp3$" }, example: "1.mp3" }],
      get: { operationId: "getLiveAudio", tags, security: [], summary: "Audio made on demand, streamed while it is made (the lookup's audio_live)", description: "A progressive MP3 (no length, no ranges, never cached): the full file's audio, rendered chunk by chunk, from its start; it ends with the article, or after 30 s without a new chunk (the rest is queued: continue in `audio` once the lookup has it). 404 when nothing of it was made within a minute. Local engines only (cloud audio is normalised once whole). At most 4 streams at once per client address (429).", responses: { "200": { description: "MP3 as it is made.", content: { "audio/mpeg": { schema: { type: "string", format: "binary" } } } }, ...std("NotFound", "TooManyRequests") } },
    },
    "/feeds/{publicKey}.xml": {
      parameters: [
        { name: "publicKey", in: "path", required: true, schema: { type: "string", pattern: PUBLIC_KEY_PATTERN.slice(1, -1) }, example: EXAMPLE_KEY },
        { name: "label", in: "query", required: false, description: "Only articles with this label (one show per label).", schema: { type: "string" }, example: "news" },
        { name: "page", in: "query", required: false, description: "Page of 100 items, newest first (RFC 5005 links).", schema: { type: "string", pattern: "^[1-9][0-9]{0,5}$" }, example: "1" },
      ],
      get: { operationId: "getPodcastFeed", tags, security: [], summary: "The project's podcast feed: RSS 2.0 with iTunes and Podcasting 2.0 tags (ETag, Last-Modified, 304)", description: "Each item's description is the opening of its article. Items whose revision has timed text carry `podcast:transcript` (WebVTT and SRT) and, for articles with headings, `podcast:chapters` (docs/transcripts.md).", responses: { "200": { description: "RSS.", content: { "application/rss+xml": { schema: { type: "string" } } } }, "304": { description: "Not modified." }, ...std("BadRequest", "Unauthorized", "NotFound", ...UPSTREAM) } },
    },
    "/feeds/artwork.png": {
      get: { operationId: "getFeedArtwork", tags, security: [], summary: "The generated podcast artwork (1400×1400 PNG) a feed shows until the project sets feed.imageUrl", responses: { "200": { description: "PNG.", content: { "image/png": { schema: { type: "string", format: "binary" } } } }, "304": { description: "Not modified." } } },
    },
    "/oembed": {
      parameters: [
        { name: "url", in: "query", required: true, description: "An article page on a host the project claimed.", schema: { type: "string", format: "uri" }, example: "https://news.example.com/2026/11/library-budget" },
        { name: "format", in: "query", required: false, schema: { const: "json" }, example: "json" },
        { name: "maxwidth", in: "query", required: false, schema: { type: "string", pattern: "^[0-9]{1,4}$" }, example: "640" },
      ],
      get: { operationId: "getOembed", tags, security: [], summary: "oEmbed for article pages on a host the project verified: the player as rich HTML (an iframe)", responses: { ...ok("oEmbed answer.", "OembedResult"), "501": { description: "format=xml: only json is served (oEmbed 2.2).", content: json("ErrorResult") }, ...std("BadRequest", "Unauthorized", "NotFound", ...UPSTREAM) } },
    },
  };
}
