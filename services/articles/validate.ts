// Input rules for publisher calls. Every failure is InvalidArgument with a
// message that names the field the way the public API spells it.
import { Code, ConnectError } from "@connectrpc/connect";
import { unsafeIdProblem, unsafeTextProblem } from "../../lib/text-rules.js";
import { queryWords } from "../../lib/search-words.js";
import { URL_MAX_CHARS, normalizeHttpUrl } from "../../lib/urls.js";
import { checkVoiceLang, DEFAULT_LANG, DEFAULT_VOICE } from "../../lib/voices.js";

export const LIMITS = {
  title: 1_000,
  text: 1_000_000,
  url: URL_MAX_CHARS,
  externalId: 256,
  labels: 100,
  label: 100,
  prompt: 4_096,
  pageDefault: 10,
  pageMin: 10,
  pageMax: 100,
} as const;

export const invalid = (message: string) => new ConnectError(message, Code.InvalidArgument);

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;

export function requiredText(field: "title" | "text", value: string, max: number): string {
  if (value.trim() === "") throw invalid(`${field} is required and must not be empty`);
  if (value.length > max) throw invalid(`${field} is too long (${value.length} characters; at most ${max})`);
  // Titles go into podcast feeds and text into SSML: nothing XML cannot carry (one regex pass, also over megabytes).
  const problem = unsafeTextProblem(value);
  if (problem) throw invalid(`${field} ${problem}`);
  return field === "title" ? value.trim() : value;
}

/** The URL as stored: normalised once here (lib/urls.ts), so lookups by any spelling of it find the article. */
export function optionalUrl(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (value.length > LIMITS.url) throw invalid(`url is too long (at most ${LIMITS.url} characters)`);
  const problem = unsafeIdProblem(value);
  if (problem) throw invalid(`url ${problem}`);
  const normal = normalizeHttpUrl(value);
  if (normal === null) throw invalid(`url must be an absolute http(s) URL (got '${value.slice(0, 100)}')`);
  if (normal.length > LIMITS.url) throw invalid(`url is too long once percent-encoded (${normal.length} characters; at most ${LIMITS.url})`);
  return normal;
}

export function externalIdValue(field: string, value: string): string {
  if (value.length < 1 || value.length > LIMITS.externalId) throw invalid(`${field} must be 1 to ${LIMITS.externalId} characters long`);
  if (CONTROL.test(value)) throw invalid(`${field} must not contain control characters`);
  const problem = unsafeIdProblem(value);
  if (problem) throw invalid(`${field} ${problem}`);
  return value;
}

export const optionalExternalId = (field: string, value: string | undefined) => (value === undefined ? undefined : externalIdValue(field, value));

/** Both or neither; on create neither means the defaults, on update it means keep. */
export function voiceAndLang(voice: string | undefined, lang: string | undefined): { voice: string; lang: string } | undefined {
  if (voice === undefined && lang === undefined) return undefined;
  if (voice === undefined || lang === undefined) throw invalid("voice and lang must be sent together");
  const problem = checkVoiceLang(voice, lang);
  if (problem) throw invalid(`voice/lang: ${problem}`);
  return { voice, lang };
}

export const defaultVoice = () => ({ voice: DEFAULT_VOICE, lang: DEFAULT_LANG as string });

export function labelList(values: readonly string[]): string[] {
  if (values.length > LIMITS.labels) throw invalid(`labels: at most ${LIMITS.labels} labels (got ${values.length})`);
  for (const [i, l] of values.entries()) {
    if (l.trim().length < 1 || l.length > LIMITS.label) throw invalid(`labels[${i}] must be 1 to ${LIMITS.label} characters long and not blank`);
    const problem = unsafeIdProblem(l);
    if (problem) throw invalid(`labels[${i}] ${problem}`);
  }
  return [...new Set(values)];
}

/** The list's label filter: any label an article may carry, so nothing else (a blank one would match none anyway). */
export function labelFilter(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (value.trim().length < 1 || value.length > LIMITS.label) throw invalid(`label must be 1 to ${LIMITS.label} characters long and not blank`);
  const problem = unsafeIdProblem(value);
  if (problem) throw invalid(`label ${problem}`);
  return value;
}

/** A search query's folded words (lib/search-words.ts); undefined for no query. */
export function searchWords(q: string | undefined): string[] | undefined {
  if (q === undefined) return undefined;
  const parsed = queryWords(q);
  if ("problem" in parsed) throw invalid(parsed.problem);
  return parsed.words;
}

export function promptValue(value: string): string {
  if (value.length > LIMITS.prompt) throw invalid(`prompt is too long (${value.length} characters; at most ${LIMITS.prompt})`);
  const problem = unsafeTextProblem(value);
  if (problem) throw invalid(`prompt ${problem}`);
  return value;
}

export function page(limit: number, offset: number): { limit: number; offset: number } {
  const l = limit === 0 ? LIMITS.pageDefault : limit;
  if (!Number.isInteger(l) || l < LIMITS.pageMin || l > LIMITS.pageMax) {
    throw invalid(`limit must be between ${LIMITS.pageMin} and ${LIMITS.pageMax} (got ${limit})`);
  }
  if (!Number.isInteger(offset) || offset < 0) throw invalid(`offset must be 0 or more (got ${offset})`);
  return { limit: l, offset };
}

export function requiredId(field: string, value: string): string {
  if (value === "") throw invalid(`${field} is required`);
  const problem = unsafeIdProblem(value);
  if (problem) throw invalid(`${field} ${problem}`);
  return value;
}

/**
 * RFC 3339 date-time (what JSON Schema's "date-time" format is): a date, a time with seconds and
 * a time zone. The gateway checks the same with ajv; this holds for direct RPC callers.
 */
const DATE_TIME = /^[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt ][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?([Zz]|[+-][0-9]{2}:[0-9]{2})$/;

/** A publication date as stored: ISO 8601 in UTC with milliseconds, so every answer spells it one way. */
export function publishedValue(value: string): string {
  const ms = DATE_TIME.test(value) ? Date.parse(value.replace(" ", "T")) : NaN;
  // Date.parse rolls 2024-02-30 over into March: a date that does not exist is refused instead.
  if (Number.isNaN(ms) || !sameCalendarDay(value, ms)) throw invalid(`published must be an ISO 8601 date-time with a time zone, e.g. 2024-05-01T09:30:00Z (got '${value.slice(0, 60)}')`);
  return new Date(ms).toISOString();
}

export const optionalPublished = (value: string | undefined) => (value === undefined ? undefined : publishedValue(value));

/** Whether the date part of `value` names a real day (checked at its own offset, where it is that day). */
function sameCalendarDay(value: string, ms: number): boolean {
  const offset = /([+-])([0-9]{2}):([0-9]{2})$/.exec(value);
  const shift = offset ? (offset[1] === "+" ? 1 : -1) * (Number(offset[2]) * 60 + Number(offset[3])) * 60_000 : 0;
  return new Date(ms + shift).toISOString().slice(0, 10) === value.slice(0, 10) && Number(value.slice(11, 13)) < 24;
}

/** A real calendar day as YYYY-MM-DD (2026-11-31 is not one), returned as given. */
export function calendarDay(field: string, value: string): string {
  const ms = /^[0-9]{4}-[0-9]{2}-[0-9]{2}$/.test(value) ? Date.parse(`${value}T00:00:00Z`) : NaN;
  if (Number.isNaN(ms) || new Date(ms).toISOString().slice(0, 10) !== value) throw invalid(`${field}: must be a calendar date as YYYY-MM-DD`);
  return value;
}
