// The JSON Schemas of the public API. These very objects validate requests
// (compiled once below) and are published as components.schemas in the
// OpenAPI document, so the documentation cannot drift from the checks.
import { Ajv2020, type ErrorObject, type ValidateFunction } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import { addCharacterRules, CHARACTERS_KEYWORD, NOT_BLANK, UNSAFE_ID_MESSAGE, UNSAFE_TEXT_MESSAGE } from "../lib/text-rules.js";
import { LANGS, VOICES, VOICE_NAMES, checkVoiceLang } from "../lib/voices.js";
import { PRONUNCIATION_LIMITS, RULE_LANG, pronunciationProblem, type PronunciationRule } from "../lib/pronunciations.js";
import { normalizeHttpUrl } from "../lib/urls.js";
import { MAX_QUERY_CHARS, MAX_QUERY_WORDS, MIN_PREFIX_CHARS } from "../lib/search-words.js";
import { HttpError } from "./errors.js";

// ajv-formats is CommonJS; under NodeNext its default import is the module object.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (ajv: Ajv2020) => Ajv2020;

type Schema = Record<string, unknown>;

/** Annotation read by the error formatter; a valid OpenAPI "x-" extension. */
const MESSAGE = "x-error-message";

/** The articles service's own limits (services/articles/validate.ts), stated here so the document tells the truth. */
export const LIMITS = {
  title: 1_000,
  text: 1_000_000,
  externalId: 256,
  url: 2_048,
  prompt: 4_000,
  label: 100,
  labels: 100,
} as const;

// Each rule a subschema of its own, so a failure is explained by its own message.
const notBlank: Schema = { pattern: NOT_BLANK, [MESSAGE]: "must not be blank (whitespace only)" };
// Character rules are checked in code (lib/text-rules.ts), not as patterns: see there why.
const safeId: Schema = { [CHARACTERS_KEYWORD]: "id", [MESSAGE]: UNSAFE_ID_MESSAGE };
const safeText: Schema = { [CHARACTERS_KEYWORD]: "text", [MESSAGE]: UNSAFE_TEXT_MESSAGE };

/** Checked by lib/urls.ts (WHATWG URL), which the articles service stores and looks up by. */
const HTTP_IRI = "iri";
const URL_NORMALISED =
  "Stored normalised (WHATWG URL, as browsers do): scheme and host in lowercase, an IDN host in punycode, the default port dropped, " +
  "path, query and fragment percent-encoded as UTF-8 with upper-case hex; the article is returned with that form.";

const httpUrl: Schema = {
  type: "string",
  format: HTTP_IRI,
  pattern: "^[Hh][Tt][Tt][Pp][Ss]?://[^/?#\\s]+",
  maxLength: LIMITS.url,
  [MESSAGE]: "must be an absolute http(s) URL",
  allOf: [safeId],
  description: `Original article URL: an absolute http(s) URL or IRI (Unicode host, path and query allowed; no control or bidi characters). ${URL_NORMALISED}`,
  examples: ["https://news.example.com/2024/05/library-budget", "https://zeitung.example/lokales/bücherei-über-uns"],
};

const voice: Schema = { type: "string", enum: [...VOICE_NAMES], description: "Voice name; send together with lang.", examples: ["alloy"] };
const lang: Schema = { type: "string", enum: [...LANGS], description: "Locale; must be one the voice speaks. Send together with voice.", examples: ["en-US"] };

// Voices restricted to fewer locales than exist get an explicit pair rule.
const voiceLangPairs: Schema[] = VOICES.filter((v) => v.langs.length < LANGS.length).map((v) => ({
  if: { properties: { voice: { const: v.name } }, required: ["voice"] },
  then: { properties: { lang: { enum: [...v.langs] } } },
}));

const labels: Schema = {
  type: "array",
  items: { type: "string", minLength: 1, maxLength: LIMITS.label, allOf: [notBlank, safeId], description: "Not blank; no control characters, unpaired surrogates or bidi controls." },
  maxItems: LIMITS.labels,
  description: "Labels of the article.",
  examples: [["local", "politics"]],
};

const requestFields: Record<string, Schema> = {
  title: { type: "string", minLength: 1, maxLength: LIMITS.title, allOf: [notBlank, safeText], description: "Article title; not blank, no control characters other than tab and line breaks, no unpaired surrogates, U+FFFE or U+FFFF.", examples: ["Council approves the library budget"] },
  text: { type: "string", minLength: 1, maxLength: LIMITS.text, allOf: [notBlank, safeText], description: "Body text, not blank; HTML allowed when parse is true. No control characters other than tab and line breaks, no unpaired surrogates, U+FFFE or U+FFFF.", examples: ["The city council approved the budget for public libraries on Tuesday."] },
  url: httpUrl,
  externalId: {
    type: "string",
    minLength: 1,
    maxLength: LIMITS.externalId,
    allOf: [safeId],
    description: "Caller-supplied id, unique across all articles; no control characters, unpaired surrogates or bidi controls.",
    examples: ["cms-4711"],
  },
  voice,
  lang,
  parse: { type: "boolean", description: "Strip HTML and clean the text before processing." },
  isRaw: { type: "boolean", description: "Treat the text as raw (no speech normalisation)." },
  published: {
    type: "string",
    format: "date-time",
    [MESSAGE]: "must be an ISO 8601 date-time with a time zone (RFC 3339), e.g. 2024-05-01T09:30:00Z",
    description: "When the article was published: an ISO 8601 date-time with a time zone (RFC 3339). Lists and feeds order by it; without it the article lists by its creation.",
    examples: ["2024-05-01T09:30:00+02:00"],
  },
};

/** Answered as stored: UTC with milliseconds, or null when none was given. */
const publishedOut: Schema = { type: ["string", "null"], format: "date-time", description: "When the article was published (ISO 8601, UTC); null when not given. Lists order by it, else by creation." };
const warningOut: Schema = {
  type: "string",
  description: "Present when the publisher should know something about the article, e.g. that its detected language has no voice and the default voice reads it.",
};

/** Named, so the document shows the request bodies as plain objects plus this one rule. */
export const VoiceLangRule: Schema = {
  type: "object",
  description: "voice and lang are sent together, and the voice must speak the lang (voices limited to some locales are listed as if/then rules).",
  dependentRequired: { voice: ["lang"], lang: ["voice"] },
  allOf: voiceLangPairs,
};

const pairRules = { allOf: [VoiceLangRule] };

const UNKNOWN_FIELDS_NOTE = "Unknown fields are ignored (neither stored nor rejected).";

const CREATE_REQUIRED = ["title", "text"];

/** An optional create field that also takes null: typed clients send null for "none", and it means absent (dropped before validation). */
function orNull(s: Schema): Schema {
  return { ...s, type: [s.type, "null"], ...(Array.isArray(s.enum) ? { enum: [...(s.enum as unknown[]), null] } : {}) };
}

/**
 * Create from a URL: `fetch: true` with a `url` and no `text` (the title is then optional); the
 * page is fetched in the background. Without it, title and text are required as the spec says.
 */
export const FromUrlRule: Schema = {
  description: "With fetch: true, url is required and text must be absent (title optional: the page's is used); otherwise title and text are required.",
  if: { properties: { fetch: { const: true } }, required: ["fetch"] },
  then: {
    required: ["url"],
    properties: {
      url: true,
      text: { not: {}, [MESSAGE]: "must be absent when fetch is true: the text comes from the page" },
      parse: { const: false, [MESSAGE]: "does not go with fetch: the page's article is extracted as text" },
      isRaw: { const: false, [MESSAGE]: "does not go with fetch: the page's article is extracted as text" },
    },
  },
  else: { required: CREATE_REQUIRED, properties: { title: true, text: true } },
};

export const ArticleCreateRequest: Schema = {
  type: "object",
  description: `Body of POST /api/articles. ${UNKNOWN_FIELDS_NOTE} An optional field sent as null is treated as absent.`,
  properties: Object.fromEntries(
    Object.entries({
      ...requestFields,
      parse: { ...requestFields.parse, default: false },
      isRaw: { ...requestFields.isRaw, default: false },
      prompt: { type: "string", maxLength: LIMITS.prompt, allOf: [safeText], description: "Individual prompt for the speech model (gpt-4o-mini-tts only).", examples: ["Calm, even pace."] },
      labels,
      fetch: {
        type: "boolean",
        default: false,
        description:
          "Create from a URL: true fetches the page at url in the background and takes title, text, publication date, language and canonical URL from it; send no text then (a title sent is kept). The article is recrawling, then parsed, then on to ready, or errored with why in words (docs/sources.md).",
      },
    }).map(([name, field]) => [name, CREATE_REQUIRED.includes(name) ? field : orNull(field)]),
  ),
  allOf: [VoiceLangRule, FromUrlRule],
};

export const ArticleUpdateRequest: Schema = {
  type: "object",
  description: `Body of the PUT endpoints. Absent optional fields keep their values. ${UNKNOWN_FIELDS_NOTE}`,
  required: ["title", "text"],
  properties: {
    ...requestFields,
    externalId: { ...requestFields.externalId, description: "New external id; must be unique." },
    prompt: { type: ["string", "null"], maxLength: LIMITS.prompt, allOf: [safeText], description: "New prompt; null removes it." },
    published: { ...requestFields.published, type: ["string", "null"], description: "New publication date; null removes it (the article lists by its creation again)." },
    labels: { ...labels, description: "Full replacement of the labels." },
  },
  ...pairRules,
};

/**
 * Query integers are written as plain decimal digits: no sign, exponent, hex,
 * spaces or empty value. The pattern states that for clients and is checked
 * on the raw text (checkQueryText) before the value is converted.
 */
const DECIMAL = "^[0-9]{1,10}$";

export const ArticleStatusSchema: Schema = {
  type: "string",
  enum: ["waiting", "processing", "ready", "errored", "deleted", "retry", "fallback", "no_money", "limit_reached", "rejected", "parsed", "recrawling"],
};

export const ListQuery: Schema = {
  type: "object",
  properties: {
    limit: { type: "integer", pattern: DECIMAL, minimum: 10, maximum: 100, default: 10, examples: [10], description: "Page size (plain decimal digits)." },
    offset: { type: "integer", pattern: DECIMAL, minimum: 0, maximum: 2_147_483_647, default: 0, examples: [0], description: "Number of articles to skip (plain decimal digits)." },
    status: {
      ...ArticleStatusSchema,
      examples: ["ready"],
      description: "Only articles in this status; count is then their total. `deleted` lists none (deleted articles are never listed).",
    },
    label: {
      type: "string",
      minLength: 1,
      maxLength: LIMITS.label,
      allOf: [notBlank, safeId],
      examples: ["politics"],
      description: "Only articles carrying this label (exact match); count is then their total. Combines with status: articles matching both.",
    },
    q: {
      type: "string",
      minLength: 1,
      maxLength: MAX_QUERY_CHARS,
      examples: ["bucher herbst"],
      description:
        `Search: only articles whose title or text holds every word of q as a whole word, in any order, the last word of ${MIN_PREFIX_CHARS} letters or more also as the start of a word ("harbour sto" finds "Harbour storm"), ignoring case and diacritics ("bucher" finds "Bücher"); at most ${MAX_QUERY_WORDS} words. ` +
        "The page is then ranked by relevance (words in the title first), then newest first, and count is the number of matches. Combines with status and label.",
    },
  },
};

export const ArticleIdParam: Schema = {
  type: "string",
  minLength: 1,
  maxLength: 200,
  allOf: [safeId],
  description: "Article slug (internal id), as returned by the create call.",
  examples: ["council-approves-the-library-budget-x7k2"],
};
export const ExternalIdParam: Schema = { ...requestFields.externalId, description: "The external id given on creation." };
export const ExternalUrlParam: Schema = {
  ...httpUrl,
  description:
    "The original article URL, URL-encoded once (its slashes may arrive encoded or not). Matched in its normalised form, so the Unicode form, " +
    "the percent-encoded form and a differently-cased host find the same article.",
};

const nullableString = { type: ["string", "null"] };
const storedUrl: Schema = { ...nullableString, description: `The original article URL, or null. ${URL_NORMALISED}` };
const audioFields: Record<string, Schema> = {
  audio: { type: "string", description: "Full audio MP3 URL; only when status is ready." },
  audio_duration: { type: "number", description: "Full audio duration in seconds; only when ready." },
  audio_preview: { type: "string", description: "Preview MP3 URL; only when ready." },
  audio_preview_duration: { type: "number", description: "Preview duration in seconds; only when ready." },
};

export const Article: Schema = {
  type: "object",
  additionalProperties: false,
  required: ["id", "externalId", "title", "text", "prompt", "added", "updated", "status", "url", "isRaw", "voice", "lang", "labels", "published"],
  properties: {
    id: { type: "string" },
    externalId: nullableString,
    title: { type: "string" },
    text: { type: "string" },
    prompt: nullableString,
    added: { type: "integer", description: "Unix timestamp of creation." },
    updated: { type: ["integer", "null"], description: "Unix timestamp of the last processing." },
    status: ArticleStatusSchema,
    url: storedUrl,
    isRaw: { type: "boolean" },
    voice: { type: "string" },
    lang: { type: "string" },
    labels: { type: "array", items: { type: "string" } },
    published: publishedOut,
    warning: warningOut,
    type: {
      type: "array",
      description: "Content-type scores; present only when detected.",
      items: {
        type: "object",
        additionalProperties: false,
        required: ["Name", "Score"],
        properties: { Name: { type: "string" }, Score: { type: "number" } },
      },
    },
    ...audioFields,
    error: { type: "string", description: "Last error; only when status is errored." },
    errors: {
      type: "array",
      description: "Error history; only when status is errored.",
      items: {
        type: "object",
        additionalProperties: false,
        required: ["error", "date"],
        properties: { error: { type: "string" }, date: { type: "string", format: "date-time" } },
      },
    },
  },
};

export const ArticleListItem: Schema = {
  type: "object",
  additionalProperties: false,
  description: "Abbreviated article; note the snake-case external_id.",
  required: ["id", "external_id", "title", "text", "added", "updated", "status", "url", "isRaw", "voice", "lang", "labels", "published"],
  properties: {
    id: { type: "string" },
    external_id: nullableString,
    title: { type: "string" },
    text: { type: "string" },
    added: { type: "integer" },
    updated: { type: ["integer", "null"] },
    status: ArticleStatusSchema,
    url: storedUrl,
    isRaw: { type: "boolean" },
    voice: { type: "string" },
    lang: { type: "string" },
    labels: { type: "array", items: { type: "string" }, description: "The article's labels; empty when it has none (not in the original spec)." },
    published: publishedOut,
    ...audioFields,
  },
};

const ok = { type: "string", const: "ok" };

export const SuccessResult: Schema = { type: "object", additionalProperties: false, required: ["result"], properties: { result: ok } };

export const ErrorResult: Schema = {
  type: "object",
  additionalProperties: false,
  required: ["result", "message"],
  description: "result is fail for client errors (4xx) and error for server errors (5xx).",
  properties: { result: { type: "string", enum: ["fail", "error"] }, message: { type: "string" } },
};

export const IdResult: Schema = {
  type: "object",
  additionalProperties: false,
  required: ["result", "id"],
  properties: { result: ok, id: { type: "string", description: "Article slug." }, warning: warningOut },
};

export const ArticleResult: Schema = {
  type: "object",
  additionalProperties: false,
  required: ["result", "article"],
  properties: { result: ok, article: Article },
};

export const ArticleListResult: Schema = {
  type: "object",
  additionalProperties: false,
  required: ["result", "count", "articles"],
  properties: {
    result: ok,
    count: { type: "integer", description: "Total of non-deleted articles of the project (not the page size). A search (`q`) counts at most 1,000: more matches answer 1,000 with `countCapped`." },
    countCapped: { const: true, description: "Only on a search (`q`) that matches more than 1,000 articles: `count` is then 1,000, a lower bound, and paging goes on past it." },
    articles: { type: "array", items: ArticleListItem },
  },
};

// ---- Timed segments (docs/transcripts.md) ----

const secondsInAudio = (what: string): Schema => ({ type: "number", minimum: 0, description: `${what}, in seconds from the start of the full audio (millisecond precision).` });

export const TimedSentence: Schema = {
  type: "object",
  additionalProperties: false,
  required: ["text", "start", "end"],
  description: "A sentence in the article's own words and when it is heard.",
  properties: { text: { type: "string" }, start: secondsInAudio("Where it starts"), end: secondsInAudio("Where it ends") },
};

export const TimedSegment: Schema = {
  type: "object",
  additionalProperties: false,
  required: ["kind", "text", "start", "end", "sentences"],
  description: "The title, a heading or one paragraph of the article, with its sentences.",
  properties: {
    kind: { type: "string", enum: ["title", "heading", "paragraph"], description: "`heading`: an h2 or h3 of an article sent as HTML with `parse: true`; each starts a chapter." },
    text: { type: "string", description: "The paragraph as shown: its sentences joined with spaces." },
    start: secondsInAudio("Where it starts"),
    end: secondsInAudio("Where it ends"),
    sentences: { type: "array", items: TimedSentence },
  },
};

export const SegmentsResult: Schema = {
  type: "object",
  additionalProperties: false,
  required: ["result", "segments"],
  description: "Where the title, each paragraph and each sentence are heard in the ready revision's full audio, in reading order.",
  properties: { result: ok, segments: { type: "array", items: TimedSegment } },
};

export const HealthResult: Schema = {
  type: "object",
  required: ["result", "services"],
  properties: {
    result: { type: "string", enum: ["ok", "error"] },
    services: { type: "object", additionalProperties: { type: "string" } },
  },
};

// ---- Bulk import (docs/import.md) ----

export const ImportAudioParam: Schema = {
  type: "string",
  enum: ["immediate", "onDemand"],
  description: "When the imported articles' audio is made: immediate renders each at once, onDemand stores it waiting until a listener or the publisher asks for it. Absent: the project's setting.",
  examples: ["onDemand"],
};

export const ImportLineResult: Schema = {
  type: "object",
  additionalProperties: false,
  required: ["line", "result"],
  description:
    "What became of one line of the upload: ok with the new article's id, or fail with the status and message POST /api/articles would have answered for it " +
    "(413 for a line over the body limit). A taken externalId also carries the id of the article that holds it.",
  properties: {
    line: { type: "integer", minimum: 1, description: "1-based line number in the upload; blank lines count but get no result." },
    result: { type: "string", enum: ["ok", "fail"] },
    id: { type: "string", description: "ok: the new article's slug; fail with a taken externalId: the slug of the article that holds it." },
    status: { type: "integer", description: "fail: the HTTP status a POST /api/articles of this line would have had." },
    message: { type: "string", description: "fail: why, naming the field." },
    warning: { ...warningOut, description: "ok: as the warning of POST /api/articles." },
  },
};

export const ImportSummary: Schema = {
  type: "object",
  additionalProperties: false,
  required: ["result", "imported", "failed"],
  description: "The last line of an import's answer.",
  properties: {
    result: ok,
    imported: { type: "integer", minimum: 0, description: "Lines that created an article." },
    failed: { type: "integer", minimum: 0, description: "Lines that did not (each has its fail line above)." },
    stopped: { type: "string", description: "Present when the import ended before the end of the upload (it arrived too slowly), saying why; send the lines after the last answered one again." },
  },
};

/** Named schemas, in the order they appear in the OpenAPI document. */
export const SCHEMAS = {
  ArticleCreateRequest,
  ArticleUpdateRequest,
  VoiceLangRule,
  FromUrlRule,
  ArticleStatus: ArticleStatusSchema,
  Article,
  ArticleListItem,
  SuccessResult,
  ErrorResult,
  IdResult,
  ArticleResult,
  ArticleListResult,
  TimedSentence,
  TimedSegment,
  SegmentsResult,
  HealthResult,
  ImportLineResult,
  ImportSummary,
} as const;

function newAjv(extra: object = {}): Ajv2020 {
  const ajv = new Ajv2020({ allErrors: true, verbose: true, strict: true, ...extra });
  ajv.addKeyword({ keyword: MESSAGE, schemaType: "string" });
  addCharacterRules(ajv);
  addFormats(ajv);
  ajv.addFormat(HTTP_IRI, { type: "string", validate: (s: string) => normalizeHttpUrl(s) !== null });
  return ajv;
}

// Request bodies are taken as sent; the query string arrives as text, so its
// validator converts numbers and fills in the defaults.
const bodyAjv = newAjv();
const queryAjv = newAjv({ coerceTypes: true, useDefaults: true, strictTypes: false });

function describeType(t: unknown): string {
  const names = (Array.isArray(t) ? t : [t]).map((x) => (x === "integer" ? "an integer" : x === "array" || x === "object" ? `an ${x}` : x === "null" ? "null" : `a ${x}`));
  return names.join(" or ");
}

function fieldName(err: ErrorObject): string {
  const parts = err.instancePath.split("/").slice(1).map((p) => p.replace(/~1/g, "/").replace(/~0/g, "~"));
  if (err.keyword === "required") parts.push(String(err.params.missingProperty));
  if (err.keyword === "dependentRequired") parts.push(String(err.params.missingProperty));
  return parts.reduce((acc, p) => (/^\d+$/.test(p) ? `${acc}[${p}]` : acc ? `${acc}.${p}` : p), "");
}

function describe(err: ErrorObject, data: unknown, root: string): string | null {
  const own = (err.parentSchema as Schema | undefined)?.[MESSAGE];
  const p = err.params as Record<string, unknown>;
  let text: string;
  switch (err.keyword) {
    case "if":
      return null; // the failing "then" branch explains it
    case "required":
      text = "is required";
      break;
    case "dependentRequired":
      text = `is required when ${String(p.property)} is given`;
      break;
    case "type":
      text = `must be ${describeType(p.type)}`;
      break;
    case "minimum":
      text = `must be >= ${String(p.limit)}`;
      break;
    case "maximum":
      text = `must be <= ${String(p.limit)}`;
      break;
    case "minLength":
      text = p.limit === 1 ? "must not be empty" : `must be at least ${String(p.limit)} characters`;
      break;
    case "maxLength":
      text = `must be at most ${String(p.limit)} characters`;
      break;
    case "maxItems":
      text = `must have at most ${String(p.limit)} items`;
      break;
    case "enum":
      if (err.schemaPath.includes("/then/")) {
        const body = data as { voice?: string; lang?: string };
        text = checkVoiceLang(String(body.voice), String(body.lang)) ?? "does not match the voice";
      } else {
        text = `must be one of: ${(p.allowedValues as unknown[]).filter((x) => x !== null).join(", ")}`;
      }
      break;
    default:
      text = typeof own === "string" ? own : (err.message ?? "is invalid");
  }
  if (typeof own === "string" && (err.keyword === "pattern" || err.keyword === "format")) text = own;
  return `${fieldName(err) || root}: ${text}`;
}

/**
 * Without the noise of anyOf: a value that failed a branch's own rule (a
 * string with a control character) is explained by that rule, not also by
 * "must be null" from the other branch and "must match a schema in anyOf".
 */
function explaining(errors: ErrorObject[]): ErrorObject[] {
  const otherBranch = (e: ErrorObject) => e.keyword === "type" && /\/anyOf\/\d+\/type$/.test(e.schemaPath);
  const specific = new Set(errors.filter((e) => e.keyword !== "anyOf" && !otherBranch(e)).map((e) => e.instancePath));
  return errors.filter((e) => !specific.has(e.instancePath) || (e.keyword !== "anyOf" && !otherBranch(e)));
}

function compile(ajv: Ajv2020, schema: Schema, root: string): (data: unknown) => void {
  const fn: ValidateFunction = ajv.compile(schema);
  return (data) => {
    if (fn(data)) return;
    // A value of the wrong type is explained by that alone (not by the string rules it then also "breaks").
    const errors = explaining(fn.errors ?? []);
    const mistyped = new Set(errors.filter((e) => e.keyword === "type").map((e) => e.instancePath));
    const relevant = errors.filter((e) => e.keyword === "type" || !mistyped.has(e.instancePath));
    const messages = [...new Set(relevant.map((e) => describe(e, data, root)).filter((m): m is string => m !== null))];
    throw new HttpError(400, messages.join("; ") || `${root}: is invalid`);
  };
}

/**
 * The query string as sent, before ajv converts it: each integer parameter
 * once, in plain decimal ("0x10", "1e1", "+10", " " and "" are refused).
 */
function checkQueryText(schema: Schema): (query: Record<string, unknown>) => void {
  const properties = Object.entries(schema.properties as Record<string, Schema>);
  const integers = properties.filter(([, p]) => p.type === "integer" && typeof p.pattern === "string");
  const checks = integers.map(([name, p]) => [name, new RegExp(p.pattern as string, "u")] as const);
  const strings = properties.filter(([, p]) => p.type === "string").map(([name]) => name);
  return (query) => {
    // Repeated, a parameter arrives as an array: say so rather than "must be a string".
    for (const name of strings) if (Array.isArray(query[name])) throw new HttpError(400, `${name}: must be given once`);
    for (const [name, re] of checks) {
      const v = query[name];
      if (v === undefined) continue;
      if (Array.isArray(v)) throw new HttpError(400, `${name}: must be given once`);
      if (typeof v !== "string" || !re.test(v)) throw new HttpError(400, `${name}: must be a plain decimal integer (digits only)`);
    }
  };
}

function compileQuery(schema: Schema): (query: Record<string, unknown>) => void {
  const text = checkQueryText(schema);
  const typed = compile(queryAjv, schema, "query");
  return (query) => {
    text(query);
    typed(query);
  };
}

/** Drops the optional fields sent as null from a body object, then validates what is left. */
function nullMeansAbsent(check: (data: unknown) => void, required: readonly string[]): (data: unknown) => void {
  return (data) => {
    if (data !== null && typeof data === "object" && !Array.isArray(data)) {
      const body = data as Record<string, unknown>;
      // A create from a URL requires neither title nor text: null is "none" for them too.
      const needed = body.fetch === true ? [] : required;
      for (const key of Object.keys(body)) if (body[key] === null && !needed.includes(key)) delete body[key];
    }
    check(data);
  };
}

/** Each throws HttpError 400 naming the field; list query also gets its defaults filled in. */
export const validate = {
  createBody: nullMeansAbsent(compile(bodyAjv, ArticleCreateRequest, "body"), CREATE_REQUIRED),
  updateBody: compile(bodyAjv, ArticleUpdateRequest, "body"),
  listQuery: compileQuery(ListQuery),
  articleId: compile(bodyAjv, ArticleIdParam, "articleId"),
  externalId: compile(bodyAjv, ExternalIdParam, "externalId"),
  externalUrl: compile(bodyAjv, ExternalUrlParam, "externalUrl"),
  importAudio: compile(bodyAjv, ImportAudioParam, "audio"),
};

export interface CreateBody {
  /** Absent only with fetch. */
  title: string;
  /** Absent only with fetch. */
  text: string;
  /** Create from a URL: the page gives title and text. */
  fetch?: boolean;
  url?: string;
  externalId?: string;
  voice?: string;
  lang?: string;
  parse?: boolean;
  isRaw?: boolean;
  prompt?: string;
  labels?: string[];
  published?: string;
}

export interface UpdateBody extends Omit<CreateBody, "prompt" | "published"> {
  prompt?: string | null;
  published?: string | null;
}

/** A request validator for another route's schema: HttpError 400 naming the field, as for the articles. */
export function requestValidator(schema: Schema, root: string): (data: unknown) => void {
  return compile(bodyAjv, schema, root);
}

/** Compiles any of the published schemas; tests use it to check responses. */
export function compileSchema(schema: Schema): ValidateFunction {
  return bodyAjv.compile(schema);
}

// ---- Pronunciation rules (docs/pronunciations.md) ----
// Kept in a block of their own; lib/pronunciations.ts says the same in words
// for the articles service and gives the messages that name rule and field.

export const PronunciationRuleSchema: Schema = {
  type: "object",
  additionalProperties: false,
  required: ["match"],
  description: "How to say a word or phrase. Exactly one of say, spell or ipa; ipa may come with say as the fallback for providers without phoneme input.",
  properties: {
    match: { type: "string", minLength: 1, maxLength: PRONUNCIATION_LIMITS.match, description: "Word or phrase, matched as whole words." },
    caseSensitive: { type: "boolean", description: "Match the case as written; default false." },
    lang: { type: "string", pattern: RULE_LANG.source, description: 'Only for articles in this language ("de") or locale ("de-DE"); default every language.' },
    say: { type: "string", minLength: 1, maxLength: PRONUNCIATION_LIMITS.say, description: "Respelling read instead of the word." },
    spell: { const: true, description: "Read the word letter by letter." },
    ipa: { type: "string", minLength: 1, maxLength: PRONUNCIATION_LIMITS.ipa, description: "IPA transcription, without slashes or brackets." },
  },
  // Each branch names (and so defines) the fields it requires or forbids.
  anyOf: [
    { required: ["say"], properties: { say: true, spell: false } },
    { required: ["spell"], properties: { spell: true, say: false, ipa: false } },
    { required: ["ipa"], properties: { ipa: true, spell: false } },
  ],
};

export const PronunciationList: Schema = {
  type: "array",
  items: PronunciationRuleSchema,
  maxItems: PRONUNCIATION_LIMITS.rules,
  description: "The project's whole list of rules; PUT replaces it.",
};

export const PronunciationsResult: Schema = {
  type: "object",
  additionalProperties: false,
  required: ["result", "pronunciations"],
  properties: { result: { const: "ok" }, pronunciations: PronunciationList },
};

/** Named in the OpenAPI document beside SCHEMAS. */
export const PRONUNCIATION_SCHEMAS = { PronunciationRule: PronunciationRuleSchema, PronunciationList, PronunciationsResult } as const;

const pronunciationListCheck = bodyAjv.compile(PronunciationList);

/** 400 naming the rule (by index) and the field; the list as given otherwise. */
export function validatePronunciations(body: unknown): PronunciationRule[] {
  const problem = pronunciationProblem(body);
  if (problem) throw new HttpError(400, problem);
  if (!pronunciationListCheck(body)) {
    const messages = [...new Set((pronunciationListCheck.errors ?? []).map((e) => describe(e, body, "pronunciations")).filter((m): m is string => m !== null))];
    throw new HttpError(400, messages.map((m) => (m.startsWith("[") ? `pronunciations${m}` : m)).join("; "));
  }
  return body as PronunciationRule[];
}

// ---- Bulk jobs (docs/api.md#bulk-actions) ----
// The articles service checks the same again (services/articles/jobs/handlers.ts) and resolves filters.

/** Most articles one job takes; the articles service holds the same number (MAX_JOB_ARTICLES). */
export const BULK_MAX_ARTICLES = 10_000;

const bulkLabel: Schema = { type: "string", minLength: 1, maxLength: LIMITS.label, allOf: [notBlank, safeId] };

export const BulkFilter: Schema = {
  type: "object",
  additionalProperties: false,
  description: "The articles the list with the same query shows now (never deleted ones), newest first. An empty filter takes every live article of the project.",
  properties: {
    q: { type: "string", minLength: 1, maxLength: 200, allOf: [notBlank, safeId], description: "Words of the title and text, as GET /api/articles?q= finds them.", examples: ["Nabu"] },
    status: { ...ArticleStatusSchema, description: "Only articles in this status.", examples: ["ready"] },
    label: { ...bulkLabel, description: "Only articles carrying this label.", examples: ["politics"] },
  },
};

export const BulkRequest: Schema = {
  type: "object",
  required: ["action"],
  description: `Either ids or filter (not both), at most ${BULK_MAX_ARTICLES} articles; labels for addLabels and removeLabels only.`,
  properties: {
    action: { type: "string", enum: ["regenerate", "delete", "addLabels", "removeLabels"], description: "regenerate: a new revision of each article, read again as an update would (charged like one); delete: as DELETE; addLabels / removeLabels: the labels change, the audio stays (no new revision, nothing charged)." },
    ids: { type: "array", minItems: 1, maxItems: BULK_MAX_ARTICLES, items: ArticleIdParam, description: "The articles, by id." },
    filter: BulkFilter,
    labels: { type: "array", minItems: 1, maxItems: LIMITS.labels, items: bulkLabel, description: "What addLabels adds or removeLabels removes." },
  },
};

export const BulkJob: Schema = {
  type: "object",
  additionalProperties: false,
  required: ["id", "action", "state", "total", "done", "failed", "remaining", "errors", "labels", "created"],
  properties: {
    id: { type: "string", description: "The job's id (GET /api/jobs/{id})." },
    action: { type: "string", enum: ["regenerate", "delete", "addLabels", "removeLabels"] },
    state: { type: "string", enum: ["running", "done", "cancelled", "failed"], description: "failed: stopped before its end, `reason` says why (the daily limit or the credit ran out, a service kept failing)." },
    total: { type: "integer", minimum: 0, description: "Articles the job took at its start." },
    done: { type: "integer", minimum: 0 },
    failed: { type: "integer", minimum: 0 },
    remaining: { type: "integer", minimum: 0, description: "total − done − failed: left untouched so far (for good, once the job is no longer running)." },
    errors: {
      type: "array",
      description: "The first 100 articles that failed, each with its reason.",
      items: { type: "object", additionalProperties: false, required: ["articleId", "error"], properties: { articleId: { type: "string" }, error: { type: "string" } } },
    },
    reason: { type: "string", description: "Why the job stopped before its end." },
    labels: { type: "array", items: { type: "string" } },
    created: { type: "string", format: "date-time" },
    finished: { type: "string", format: "date-time" },
  },
};

export const BulkStartResult: Schema = {
  type: "object",
  additionalProperties: false,
  required: ["result", "id", "job"],
  properties: { result: { const: "ok" }, id: { type: "string", description: "The job's id." }, job: BulkJob },
};

export const BulkJobResult: Schema = {
  type: "object",
  additionalProperties: false,
  required: ["result", "job"],
  properties: { result: { const: "ok" }, job: BulkJob },
};

export const JobIdParam: Schema = { type: "string", minLength: 1, maxLength: 64, pattern: "^[A-Za-z0-9_-]+$", description: "A job id from POST /api/articles/bulk.", examples: ["job_3kT9aZ0qLm2xYw1v"] };

/** Named in the OpenAPI document beside SCHEMAS. */
export const BULK_SCHEMAS = { BulkFilter, BulkRequest, BulkJob, BulkStartResult, BulkJobResult } as const;

export interface BulkBody {
  action: "regenerate" | "delete" | "addLabels" | "removeLabels";
  ids?: string[];
  filter?: { q?: string; status?: string; label?: string };
  labels?: string[];
}

const bulkBodyCheck = compile(bodyAjv, BulkRequest, "body");

export const validateBulk = {
  /** 400 naming the field; also when both or neither of ids and filter are given. */
  body(data: unknown): BulkBody {
    bulkBodyCheck(data);
    const b = data as BulkBody;
    if ((b.ids === undefined) === (b.filter === undefined)) throw new HttpError(400, "body: give either ids or filter (not both)");
    const labelled = b.action === "addLabels" || b.action === "removeLabels";
    if (labelled && b.labels === undefined) throw new HttpError(400, `labels: is required for ${b.action}`);
    if (!labelled && b.labels !== undefined) throw new HttpError(400, "labels: only addLabels and removeLabels take labels");
    return b;
  },
  jobId: compile(bodyAjv, JobIdParam, "id"),
};

/** Field schemas other request bodies take over as they are (the sources' url, labels, voice and lang: source-schemas.ts). */
export const SHARED_FIELDS = { httpUrl, labels, voice, lang } as const;
