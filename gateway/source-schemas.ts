// JSON Schemas of /api/sources (docs/sources.md): they validate requests and
// are published in the OpenAPI document (openapi-sources.ts). The articles
// service checks the same rules again (services/articles/sources/handlers.ts).
import { BACKFILL_MAX, POLL_SECONDS, SOURCE_KINDS, SOURCE_MODES } from "../lib/sources.js";
import { requestValidator, SHARED_FIELDS, VoiceLangRule } from "./schemas.js";

type Schema = Record<string, unknown>;


const sourceFields: Record<string, Schema> = {
  url: { ...SHARED_FIELDS.httpUrl, description: "The feed or sitemap: an absolute http(s) URL the platform may fetch (not a private address).", examples: ["https://news.example.com/feed.xml"] },
  kind: { enum: [...SOURCE_KINDS], description: "What the URL serves; detected at each poll when absent (a given kind is enforced)." },
  pollSeconds: { type: "integer", minimum: POLL_SECONDS.min, maximum: POLL_SECONDS.max, description: `Seconds between polls; default ${POLL_SECONDS.default}.` },
  labels: { ...SHARED_FIELDS.labels, description: "Labels every article from this source gets." },
  voice: SHARED_FIELDS.voice,
  lang: SHARED_FIELDS.lang,
  mode: { enum: [...SOURCE_MODES], description: "text (default): the item's full text from the feed, else its page; page: always the item's page (fetched and extracted)." },
  backfill: { type: "integer", minimum: 0, maximum: BACKFILL_MAX, description: "Also import the newest N items published before the source was added; default 0 (only items published after)." },
};

export const SourceCreateRequest: Schema = {
  type: "object",
  description: "Body of POST /api/sources. Unknown fields are ignored.",
  required: ["url"],
  properties: sourceFields,
  allOf: [VoiceLangRule],
};

export const SourceUpdateRequest: Schema = {
  type: "object",
  description: "Body of PUT /api/sources/{sourceId}: the fields to change; absent ones keep their values. A new url starts over (its items published from now on).",
  properties: { ...sourceFields, paused: { type: "boolean", description: "A paused source is not polled (poll now still works)." } },
  allOf: [VoiceLangRule],
};

const instant = { type: ["string", "null"], format: "date-time" };

export const SourceState: Schema = {
  type: "object",
  required: ["lastPoll", "lastSuccess", "nextPoll", "seen", "created", "error"],
  properties: {
    lastPoll: { ...instant, description: "When it was last polled (null: not yet)." },
    lastSuccess: { ...instant, description: "When a poll last succeeded." },
    nextPoll: { ...instant, description: "When it is polled next (after errors, later and later: docs/sources.md)." },
    seen: { type: "integer", description: "Items the feed held at the last successful poll." },
    created: { type: "integer", description: "Articles created from it." },
    updated: { type: "integer", description: "Articles updated because their item changed." },
    error: { type: ["string", "null"], description: "Why the last poll, or one of its items, failed; null when it went well." },
  },
};

export const Source: Schema = {
  type: "object",
  required: ["id", "url", "kind", "pollSeconds", "paused", "state"],
  properties: {
    id: { type: "string" },
    url: { type: "string" },
    kind: { type: ["string", "null"], enum: [...SOURCE_KINDS, null], description: "As given, else as detected (null before the first successful poll)." },
    pollSeconds: { type: "integer" },
    paused: { type: "boolean" },
    labels: { type: "array", items: { type: "string" } },
    voice: { type: "string" },
    lang: { type: "string" },
    mode: { enum: ["text", "page"] },
    backfill: { type: "integer" },
    added: { type: "string", format: "date-time" },
    since: { type: "string", format: "date-time", description: "Items published before this are not imported." },
    state: SourceState,
  },
};

export const SourceResult: Schema = { type: "object", required: ["result", "source"], properties: { result: { const: "ok" }, source: Source } };
export const SourceListResult: Schema = { type: "object", required: ["result", "sources"], properties: { result: { const: "ok" }, sources: { type: "array", items: Source } } };
export const SourceIdParam: Schema = { type: "string", minLength: 1, maxLength: 200, description: "The id POST /api/sources answered.", examples: ["source-news-example-com-x7k2"] };

export const SOURCE_SCHEMAS = { SourceCreateRequest, SourceUpdateRequest, SourceState, Source, SourceResult, SourceListResult } as const;

export const validateSource = {
  create: requestValidator(SourceCreateRequest, "body"),
  update: requestValidator(SourceUpdateRequest, "body"),
};
