// JSON Schemas of the listener-side endpoints (player settings, listening
// events, statistics queries). They validate requests and are published in
// the OpenAPI document (openapi-listener.ts), like schemas.ts does for articles.
import { playerSettingsSchema } from "../services/auth/player-settings.js";
import { CHARACTERS_KEYWORD } from "../lib/text-rules.js";
import { requestValidator } from "./schemas.js";

type Schema = Record<string, unknown>;

export const PlayerSettings: Schema = {
  ...playerSettingsSchema,
  description: "Player, podcast feed and oEmbed settings of the project. Absent fields take their defaults.",
};

export const PUBLIC_KEY_PATTERN = "^pk_[A-Za-z0-9_-]{16,64}$";
const ID_TEXT = { type: "string", minLength: 1, maxLength: 200, [CHARACTERS_KEYWORD]: "id" };
/** A real calendar day: ajv's "date" format checks the month's length and leap years. */
const DAY = { type: "string", format: "date", pattern: "^[0-9]{4}-[0-9]{2}-[0-9]{2}$", "x-error-message": "must be a calendar date as YYYY-MM-DD" };

export const ListeningEvents: Schema = {
  type: "object",
  additionalProperties: false,
  required: ["key", "events"],
  description: "A batch of listening events, as the player sends it with navigator.sendBeacon (text/plain or application/json).",
  properties: {
    key: { type: "string", pattern: PUBLIC_KEY_PATTERN, description: "The project's public player key." },
    source: {
      enum: ["player", "embed", "console"],
      description: "Where the player runs: on the publisher's page (default), on the platform's embed page, or in the publisher's console.",
    },
    events: {
      type: "array",
      minItems: 1,
      maxItems: 50,
      items: {
        type: "object",
        additionalProperties: false,
        required: ["type", "articleId"],
        properties: {
          type: { enum: ["impression", "play", "progress", "complete", "listen"], description: "listen carries listening time only" },
          articleId: ID_TEXT,
          percent: { enum: [25, 50, 75, 100], description: "progress events only" },
          seconds: { type: "number", minimum: 0, maximum: 600, description: "Seconds listened since the previous batch." },
        },
      },
    },
  },
};

export const StatsQuery: Schema = {
  type: "object",
  additionalProperties: false,
  properties: {
    from: { ...DAY, description: "First day (UTC, inclusive); default: 29 days before `to`." },
    to: { ...DAY, description: "Last day (UTC, inclusive); default: today." },
  },
};

const StatsFigures: Schema = {
  type: "object",
  required: ["impressions", "plays", "completions", "listenThroughRate", "secondsListened", "downloads"],
  properties: {
    impressions: { type: "integer", description: "Players shown with this audio." },
    plays: { type: "integer" },
    progress25: { type: "integer" },
    progress50: { type: "integer" },
    progress75: { type: "integer" },
    completions: { type: "integer", description: "Plays that reached the end." },
    listenThroughRate: { type: "number", description: "completions / plays (0 when nothing was played)." },
    secondsListened: { type: "number" },
    downloads: { type: "integer", description: "Podcast downloads: feed enclosure requests, one per listener, episode and day (docs/player.md#statistics)." },
  },
};

export const StatsResult: Schema = {
  type: "object",
  required: ["result", "from", "to", "total", "days"],
  properties: {
    result: { const: "ok" },
    from: { type: "string" },
    to: { type: "string" },
    total: StatsFigures,
    days: { type: "array", items: { type: "object", required: ["day"], properties: { day: { type: "string" } }, additionalProperties: true } },
    bySource: {
      type: "object",
      description:
        "The totals split by where listens came from: `player` (the player on the publisher's page), `embed` (the embed page), `console` (the publisher's own console) and `podcast` (podcast apps: downloads). Every source is present; the four add up to `total`.",
      properties: Object.fromEntries(["player", "embed", "console", "podcast"].map((s) => [s, StatsFigures])),
    },
    articles: {
      type: "array",
      description: "Project statistics only: per-article totals, most played first (at most 100).",
      items: {
        type: "object",
        required: ["articleId", "title", ...(StatsFigures.required as string[])],
        properties: {
          articleId: { type: "string" },
          title: { type: ["string", "null"], description: "The article's current title (a deleted article's too); null when the article no longer exists." },
          ...(StatsFigures.properties as Record<string, unknown>),
        },
      },
    },
  },
};

export const PlayerResult: Schema = {
  type: "object",
  required: ["result", "publicKey", "settings", "snippet", "feedUrl"],
  properties: {
    result: { const: "ok" },
    publicKey: { type: "string", pattern: PUBLIC_KEY_PATTERN, description: "Public player key: not a secret; it only reads what listeners may see." },
    settings: PlayerSettings,
    snippet: { type: "string", description: "HTML to paste into an article page." },
    scriptUrl: { type: "string" },
    feedUrl: { type: "string", description: "The project's podcast feed (RSS 2.0)." },
    feedLanguage: { type: "string", description: "The feed's <language>: settings.feed.language, else the locale of the project's default voice." },
    warnings: {
      type: "array",
      description: "What the feed lacks before Apple Podcasts and Spotify accept it (artwork, owner e-mail, a valid category); empty when nothing, or when the feed is off.",
      items: {
        type: "object",
        required: ["setting", "message"],
        properties: { setting: { type: "string", description: "The setting that fixes it, e.g. feed.ownerEmail." }, message: { type: "string" } },
      },
    },
    oembedHosts: {
      type: "array",
      description: "Verification of each host in settings.oembed.hosts: a host answers oEmbed only while verified (docs/player.md).",
      items: {
        type: "object",
        required: ["host", "status", "reason", "checkedAt", "verifiedAt", "verificationUrl"],
        properties: {
          host: { type: "string", description: "As claimed, normalised (lower case, no :443 or :80)." },
          status: { enum: ["verified", "pending", "failed"], description: "pending: not checked yet; failed: the last check failed (reason)." },
          reason: { type: ["string", "null"], description: "Why the last check failed; a verified host may show one while its grace period runs." },
          checkedAt: { type: ["string", "null"], format: "date-time" },
          verifiedAt: { type: ["string", "null"], format: "date-time", description: "The last successful check." },
          verificationUrl: { type: "string", description: "Where the file listing the public key must be served." },
        },
      },
    },
  },
};

export const validateListener = {
  playerSettings: requestValidator(PlayerSettings, "body"),
  events: requestValidator(ListeningEvents, "body"),
  statsQuery: requestValidator(StatsQuery, "query"),
};
