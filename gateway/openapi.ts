// The OpenAPI 3.1 document, assembled from the schema objects in schemas.ts
// (the ones that validate requests). Nested uses of a named schema become
// $refs, found by object identity, so each schema is written down once.
import { LISTENER_SCHEMAS, listenerPaths } from "./openapi-listener.js";
import { jobPaths } from "./openapi-jobs.js";
import { sourcePaths } from "./openapi-sources.js";
import { SOURCE_SCHEMAS } from "./source-schemas.js";
import { PREVIEW_SCHEMAS, PREVIEW_TEXT_MAX } from "./routes/pronunciation-preview.js";
import { SAMPLE_WAIT_MS, VOICE_SCHEMAS, VoiceSampleQuery } from "./routes/voices.js";
import { TOKEN_SCHEMAS } from "./routes/token.js";
import { ArticleIdParam, ExternalIdParam, ExternalUrlParam, ImportAudioParam, ListQuery, BULK_SCHEMAS, PRONUNCIATION_SCHEMAS, SCHEMAS } from "./schemas.js";

type Json = Record<string, unknown>;

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

function withRefs(value: unknown, names: Map<unknown, string>, top: boolean): unknown {
  if (!top && names.has(value)) return ref(names.get(value)!);
  if (Array.isArray(value)) return value.map((v) => withRefs(v, names, false));
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, withRefs(v, names, false)]));
  }
  return value;
}

const jsonContent = (schemaName: string) => ({ "application/json": { schema: ref(schemaName) } });
const errorResponse = (description: string) => ({ description, content: jsonContent("ErrorResult") });

const ERROR_RESPONSES: Record<string, Json> = {
  BadRequest: errorResponse(
    "Invalid input (the message names the field), duplicate externalId, malformed JSON, an update of a deleted article, or, on answers that carry links, a Host (X-Forwarded-Proto behind a trusted proxy) no link can be built on.",
  ),
  Unauthorized: errorResponse("Missing, malformed or unknown bearer token."),
  Forbidden: errorResponse("The token may not do this (read-only token on a write)."),
  NotFound: errorResponse("No such article in the token's project."),
  PayloadTooLarge: errorResponse("Request body larger than the configured limit (10 MiB by default)."),
  UnsupportedMediaType: errorResponse("Request body not sent as application/json, or sent compressed (Content-Encoding other than identity)."),
  TooManyRequests: {
    ...errorResponse("The project's request rate limit (reads or writes, shared by all its tokens; docs/limits.md) or a quota was reached."),
    headers: {
      "Retry-After": { description: "Seconds until a retry can succeed.", schema: { type: "integer", minimum: 1 } },
      "RateLimit-Policy": { description: 'The bucket that refused, per draft-ietf-httpapi-ratelimit-headers: `"reads"|"writes";q=<burst>;w=<seconds to refill>`. Also sent on every counted response.', schema: { type: "string" } },
      RateLimit: { description: 'Its state: `"reads"|"writes";r=<remaining>;t=<seconds>`. Also sent on every counted response.', schema: { type: "string" } },
    },
  },
  InternalError: errorResponse("Unexpected server error; the message carries a request id."),
  Unavailable: errorResponse("A backing service is unavailable; retry later."),
  GatewayTimeout: errorResponse("A backing service did not answer in time; retry later."),
  InsufficientStorage: errorResponse("The data volume is full; nothing was written. Retry once space is freed."),
};

const errors = (...codes: number[]) => {
  const byCode: Record<number, string> = {
    400: "BadRequest",
    401: "Unauthorized",
    403: "Forbidden",
    404: "NotFound",
    413: "PayloadTooLarge",
    415: "UnsupportedMediaType",
    429: "TooManyRequests",
    500: "InternalError",
    503: "Unavailable",
    504: "GatewayTimeout",
    507: "InsufficientStorage",
  };
  return Object.fromEntries(codes.map((c) => [String(c), { $ref: `#/components/responses/${byCode[c]}` }]));
};

const COMMON = [400, 401, 403, 429, 500, 503, 504];
/** What any write may answer besides: a body too large or not JSON, a full data volume. */
const WRITE = [413, 415, 507];
const ok = (description: string, schemaName: string) => ({ "200": { description, content: jsonContent(schemaName) } });
/** A request body with an example that the server accepts as it stands ("Try it out" sends it). */
const body = (schemaName: string, example: unknown) => ({ required: true, content: { "application/json": { schema: ref(schemaName), example } } });

const CREATE_EXAMPLE = {
  title: "Council approves the library budget",
  text: "The city council approved the budget for public libraries on Tuesday. Opening hours will be extended next year.",
  url: "https://news.example.com/2024/05/library-budget",
  labels: ["local", "politics"],
};
const UPDATE_EXAMPLE = {
  title: "Council approves the library budget (corrected)",
  text: "The city council approved the budget for public libraries on Tuesday. Opening hours will be extended in March.",
  labels: ["local"],
};

/** Schema examples become the parameter's example, which Swagger UI fills in. */
function param(name: string, where: "path" | "query", schema: Json): Json {
  const { description, examples, ...rest } = schema;
  const example = Array.isArray(examples) ? examples[0] : undefined;
  return { name, in: where, required: where === "path", description, schema: rest, ...(example === undefined ? {} : { example }) };
}

const pathParam = (name: string, schema: Json) => param(name, "path", schema);

function queryParams(): Json[] {
  const props = ListQuery.properties as Record<string, Json>;
  return Object.entries(props).map(([name, schema]) => param(name, "query", schema));
}

const AUDIO_KEY: Json = {
  type: "string",
  pattern: "^[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)*$",
  description:
    "Storage key, several segments: <article>/<revision>/ then full.mp3 or preview.mp3 (as at the end of an article's audio URL), or the revision's timed text: " +
    "segments.json, transcript.vtt, transcript.srt or chapters.json (docs/transcripts.md). " +
    "Its slashes may be sent as they are or encoded (%2F, as Swagger UI sends them).",
  examples: ["council-approves-the-library-budget-x7k2/1/full.mp3"],
};

/** What /audio/ serves: the MP3s and, beside them, the timed text (docs/transcripts.md). */
const AUDIO_FILE_TYPES: Json = Object.fromEntries(
  ["audio/mpeg", "application/json", "text/vtt", "application/x-subrip"].map((t) => [t, { schema: { type: "string", contentMediaType: t } }]),
);

const DESCRIPTION = [
  "Project-scoped API for turning text articles into spoken audio (MP3).",
  "",
  "* Authentication: every article endpoint needs `Authorization: Bearer <API_TOKEN>`. Read-only tokens may call the GET endpoints only.",
  "* Bodies are JSON (`Content-Type: application/json`, UTF-8). Unknown fields in request bodies are ignored: they are neither stored nor rejected.",
  "* Errors are `{result, message}`: `fail` for 4xx (the message names the offending field), `error` for 5xx (the message carries a request id).",
  "* Every response carries `X-Request-Id` (the caller's, when it sent a plain one of up to 128 characters).",
  "* `x-characters` on a string schema is a rule the server checks (400 naming the field): `id` refuses control characters, unpaired surrogates, bidi controls and U+FFFE/U+FFFF; `text` refuses what XML 1.0 cannot carry (control characters other than tab, LF and CR, unpaired surrogates, U+FFFE/U+FFFF). They are not patterns because regex engines disagree on surrogates.",
  "* Absolute links in answers (audio URLs, player snippet, feeds, embed pages, oEmbed) start with the server's configured public URL, or else the request's origin; then a `Host` that is no host name or address with an optional port gets 400 (the message names `Host`) and nothing is changed.",
  "* Audio files under `/audio/` need no token: their URLs are unguessable and immutable, so they work as capabilities in players and feeds. They support byte ranges, ETags and long-lived caching.",
].join("\n");

/** A fresh copy of the document (callers may serialise or mutate it freely). */
export function buildOpenApi(): Json {
  const named = { ...SCHEMAS, ...PRONUNCIATION_SCHEMAS, ...BULK_SCHEMAS, ...PREVIEW_SCHEMAS, ...TOKEN_SCHEMAS, ...VOICE_SCHEMAS, ...SOURCE_SCHEMAS };
  const names = new Map<unknown, string>(Object.entries(named).map(([name, schema]) => [schema, name]));
  const schemas = Object.fromEntries(Object.entries(named).map(([name, schema]) => [name, withRefs(schema, names, true)]));
  const articleId = pathParam("articleId", ArticleIdParam);
  const externalId = pathParam("externalId", ExternalIdParam);
  const externalUrl = pathParam("externalUrl", ExternalUrlParam);

  return {
    openapi: "3.1.0",
    jsonSchemaDialect: "https://spec.openapis.org/oas/3.1/dialect/base",
    info: { title: "Article Audio Publishing API", version: "1.0.0", description: DESCRIPTION },
    servers: [{ url: "/" }],
    security: [{ bearerAuth: [] }],
    tags: [{ name: "articles" }, { name: "pronunciations" }, { name: "sources", description: "Feeds and sitemaps the project follows (docs/sources.md)." }, { name: "token" }, { name: "voices", description: "Voices, the engines that speak them, and samples (docs/voices.md)." }, { name: "docs" }, { name: "audio" }, { name: "listener", description: "Player, podcast feeds, oEmbed and listening statistics (docs/player.md)." }],
    paths: {
      "/api": {
        get: {
          operationId: "apiDocsRedirect",
          tags: ["docs"],
          summary: "Redirects to the API documentation page",
          security: [],
          responses: { "302": { description: "Redirect to /api/docs; no body.", headers: { Location: { schema: { type: "string" } } } } },
        },
      },
      "/api/token": {
        get: {
          operationId: "getToken",
          tags: ["token"],
          summary: "Says what the calling token is: its scope (full or read) and its project (any token)",
          description:
            "Lets a client adapt to its token before doing anything, e.g. hide write controls for a read-only token. " +
            "The answer never carries the token, its hash or its id. A missing, malformed, unknown or revoked token is 401 (a revocation is seen within a few seconds).",
          responses: { ...ok("The token's scope and project.", "TokenResult"), ...errors(401, 429, 500, 503, 504) },
        },
      },
      "/api/articles": {
        get: {
          operationId: "listArticles",
          tags: ["articles"],
          summary: "Lists the project's articles, newest first (deleted ones never)",
          description:
            "With `q`, a search: relevance orders the newest 1,000 matches, older ones follow them newest first, and `count` is exact up to 1,000; " +
            "a search that matches more answers `count` 1,000 with `countCapped: true` (docs/api.md).",
          parameters: queryParams(),
          responses: { ...ok("A page of articles and the total count.", "ArticleListResult"), ...errors(...COMMON) },
        },
        post: {
          operationId: "createArticle",
          tags: ["articles"],
          summary: "Creates an article and queues its audio (full token)",
          requestBody: body("ArticleCreateRequest", CREATE_EXAMPLE),
          responses: { ...ok("Slug of the new article.", "IdResult"), ...errors(...COMMON, ...WRITE) },
        },
      },
      ...importPath(),
      "/api/articles/{articleId}": {
        parameters: [articleId],
        get: {
          operationId: "getArticle",
          tags: ["articles"],
          summary: "Reads an article by its slug",
          responses: { ...ok("The article.", "ArticleResult"), ...errors(...COMMON, 404) },
        },
        put: {
          operationId: "updateArticle",
          tags: ["articles"],
          summary: "Updates an article and re-generates its audio (full token)",
          requestBody: body("ArticleUpdateRequest", UPDATE_EXAMPLE),
          responses: { ...ok("Slug of the article.", "IdResult"), ...errors(...COMMON, 404, ...WRITE) },
        },
        delete: {
          operationId: "deleteArticle",
          tags: ["articles"],
          summary: "Marks an article deleted (full token); deleting again is ok",
          responses: { ...ok("Deleted.", "SuccessResult"), ...errors(...COMMON, 404, 507) },
        },
      },
      "/api/articles/{articleId}/segments": {
        parameters: [articleId],
        get: {
          operationId: "getArticleSegments",
          tags: ["articles"],
          summary: "Reads the timed segments of the article's ready revision: title, paragraphs and sentences with their times in the full audio",
          description:
            "The segments the audio was rendered with, as stored beside its MP3s (docs/transcripts.md): the same file for as long as the revision is ready. " +
            "404 while no revision is ready, and for a revision rendered before segments were recorded.",
          responses: { ...ok("The segments, in reading order.", "SegmentsResult"), ...errors(...COMMON, 404) },
        },
      },
      "/api/articles/{articleId}/audio": {
        parameters: [articleId],
        post: {
          operationId: "requestArticleAudio",
          tags: ["articles"],
          summary: "Asks for the audio of an on-demand article now (full token): preview first, then the full file",
          description:
            "An article created with audio on demand (project setting `audio: onDemand`) waits, uncharged, until someone asks for its audio. " +
            "This admits it (daily limit and credit are charged now) and puts its job first in the project's queue. Nothing happens for an article that is not waiting on demand. 400: the article is deleted.",
          responses: { ...ok("The article after the request.", "ArticleResult"), ...errors(...COMMON, 404) },
        },
      },
      "/api/articles_external_id/{externalId}": {
        parameters: [externalId],
        get: {
          operationId: "getArticleByExternalId",
          tags: ["articles"],
          summary: "Reads an article by the external id given on creation",
          responses: { ...ok("The article.", "ArticleResult"), ...errors(...COMMON, 404) },
        },
        put: {
          operationId: "updateArticleByExternalId",
          tags: ["articles"],
          summary: "Updates an article addressed by its external id (full token)",
          requestBody: body("ArticleUpdateRequest", UPDATE_EXAMPLE),
          responses: { ...ok("Slug of the article.", "IdResult"), ...errors(...COMMON, 404, ...WRITE) },
        },
      },
      "/api/articles_external_url/{externalUrl}": {
        parameters: [externalUrl],
        get: {
          operationId: "getArticleByUrl",
          tags: ["articles"],
          summary: "Reads an article by its original URL (URL-encoded in the path)",
          responses: { ...ok("The article.", "ArticleResult"), ...errors(...COMMON, 404) },
        },
      },
      ...pronunciationPaths(),
      ...jobPaths(),
      "/api/voices": {
        get: {
          operationId: "listVoices",
          tags: ["voices"],
          summary: "Lists every voice with its engine, whether that engine is there now, and sample URLs (any token)",
          description:
            "What the audio service has loaded decides `available` and `speaks`: a cloud voice whose key is not set, or a local model whose files are missing, is read by another engine, which `speaks` names per locale. " +
            "Each locale's sample URL answers a short MP3 of the voice as it sounds now (same token). See docs/voices.md.",
          responses: { ...ok("Every voice.", "VoiceList"), ...errors(401, 429, 500, 503, 504) },
        },
      },
      "/api/voices/{voice}/sample": {
        parameters: [pathParam("voice", { type: "string", description: "A voice name from GET /api/voices.", examples: ["de-DE-KatjaNeural"] })],
        get: {
          operationId: "getVoiceSample",
          tags: ["voices"],
          summary: "A short sample sentence in the voice, as MP3 (any token; rendered on first request, then kept)",
          description: `Not charged: the sentence is the platform's. A voice that does not speak \`lang\` is a 400 naming \`lang\`; an unknown voice is a 404. A first render waits up to ${SAMPLE_WAIT_MS / 1000} s; past that the answer is a 504, the render goes on and a retry gets it.`,
          parameters: [{ ...param("lang", "query", { ...(VoiceSampleQuery.properties as Record<string, Json>).lang, examples: ["de-DE"] }), required: true }],
          responses: {
            "200": {
              description: "The sample.",
              headers: { "X-Voice-Engine": { description: "The engine that rendered it.", schema: { type: "string" } } },
              content: { "audio/mpeg": { schema: { type: "string", contentMediaType: "audio/mpeg" } } },
            },
            ...errors(400, 401, 404, 429, 500, 503, 504),
          },
        },
      },
      "/audio/{key}": {
        parameters: [pathParam("key", AUDIO_KEY)],
        get: {
          operationId: "getAudio",
          tags: ["audio"],
          summary: "Streams an MP3 file or a revision's timed text (no token; supports Range, ETag)",
          security: [],
          responses: {
            "200": { description: "The whole file.", content: AUDIO_FILE_TYPES },
            "206": { description: "The requested byte range.", content: AUDIO_FILE_TYPES },
            "304": { description: "Not modified (If-None-Match matched)." },
            "404": { $ref: "#/components/responses/NotFound" },
            "416": errorResponse("Range not satisfiable."),
            ...errors(500, 503),
          },
        },
      },
      ...listenerPaths(),
      ...sourcePaths(),
    },
    components: {
      schemas: { ...schemas, ...LISTENER_SCHEMAS },
      responses: ERROR_RESPONSES,
      securitySchemes: { bearerAuth: { type: "http", scheme: "bearer", description: "Project API token (full or read-only)." } },
    },
  };
}

/** POST /api/articles/import (docs/import.md). */
function importPath(): Json {
  const line = (n: number, b: Json) => JSON.stringify(b) + (n ? "\n" : "");
  return {
    "/api/articles/import": {
      post: {
        operationId: "importArticles",
        tags: ["articles"],
        summary: "Creates many articles from NDJSON, answering line by line as they are stored (full token)",
        description:
          "One ArticleCreateRequest per line, each validated and stored exactly as `POST /api/articles` would; blank lines are skipped. A line with a `url` and no `text` " +
          "creates the article from its page (`fetch: true` implied; the page is read in the background). The body is read as it arrives " +
          "and the body limit applies to each line. The answer streams one ImportLineResult per non-blank line, in input order, while the upload goes on, and ends with an " +
          "ImportSummary. A line's failure is its own; a bad token, a read token, a wrong content type or an unknown `audio` fail the whole request before any line is read. " +
          "Lines count against the project's `imports` rate bucket: when it is empty the import waits, it does not fail lines. See docs/import.md.",
        parameters: [param("audio", "query", ImportAudioParam)],
        requestBody: {
          required: true,
          content: {
            "application/x-ndjson": {
              schema: { type: "string", description: "Lines of ArticleCreateRequest JSON (#/components/schemas/ArticleCreateRequest), separated by LF or CRLF." },
              example: line(1, CREATE_EXAMPLE) + line(0, { ...UPDATE_EXAMPLE, externalId: "cms-4711" }),
            },
          },
        },
        responses: {
          "200": {
            description: "One line per non-blank input line, then the summary.",
            content: { "application/x-ndjson": { schema: { oneOf: [ref("ImportLineResult"), ref("ImportSummary")] } } },
          },
          ...errors(...COMMON, 415),
        },
      },
    },
  };
}

/** GET/PUT /api/pronunciations (docs/pronunciations.md). */
function pronunciationPaths(): Json {
  return {
    "/api/pronunciations": {
      get: {
        operationId: "getPronunciations",
        tags: ["pronunciations"],
        summary: "Reads the project's pronunciation rules (any token)",
        responses: { ...ok("The whole list, in the order it was set.", "PronunciationsResult"), ...errors(...COMMON) },
      },
      put: {
        operationId: "setPronunciations",
        tags: ["pronunciations"],
        summary: "Replaces the project's pronunciation rules with the list sent (full token); applies to articles created or updated afterwards",
        description:
          "The body is the whole list as a JSON array (an empty array removes every rule). A bad rule gets 400 naming its index and field, e.g. `pronunciations[2].ipa: ...`, and nothing is changed.",
        requestBody: body("PronunciationList", [
          { match: "Nguyen", ipa: "ŋwiən", say: "Nwin" },
          { match: "BASF", spell: true, lang: "de-DE" },
          { match: "Worcester", say: "Wooster", caseSensitive: true },
        ]),
        responses: { ...ok("The list as stored.", "PronunciationsResult"), ...errors(...COMMON, ...WRITE) },
      },
    },
    "/api/pronunciations/preview": {
      post: {
        operationId: "previewPronunciation",
        tags: ["pronunciations"],
        summary: "Speaks a short sample sentence with one rule and answers the MP3 (full token); charged like any synthesis",
        description:
          `One rule (checked as in PUT /api/pronunciations, the message naming \`rule.<field>\`), an optional sample \`text\` of up to ${PREVIEW_TEXT_MAX} characters and an optional voice/lang pair. ` +
          "The audio service renders the text with the rule exactly as it renders an article's rules on its local engine (an ipa rule is spoken from its phonemes where the engine reads them, else through its say, else as written). " +
          "A rule whose lang is not the sample's language would not apply, so it is a 400 naming `rule.lang`. " +
          "It goes through the audio service's Synthesize: one of the project's daily articles and the characters of the text from its credit are charged; when either is used up the answer is 429. " +
          "Nothing is stored in the project's rules. See docs/pronunciations.md.",
        requestBody: body("PronunciationPreviewRequest", { rule: { match: "Nguyen", say: "Win" }, text: "Our reporter Nguyen was there.", voice: "alloy", lang: "en-US" }),
        responses: {
          "200": {
            description: "The sample as MP3.",
            headers: { "X-Audio-Duration": { description: "Seconds.", schema: { type: "string" } } },
            content: { "audio/mpeg": { schema: { type: "string", contentMediaType: "audio/mpeg" } } },
          },
          ...errors(...COMMON, 413, 415),
        },
      },
    },
  };
}
