// Per-project settings: the document an admin edits, its defaults, and the
// validation every change goes through. The same shape is read by the
// articles service (services/articles/admission) through GetProjectSettings.
import { Ajv, type ErrorObject } from "ajv";
import { AUDIO_TIMINGS, DEFAULT_SETTINGS, type ProjectRules, type ProjectSettings, type TypeThreshold } from "../../lib/project-settings.js";
import { LOUDNESS_RANGE } from "../../lib/loudness.js";
import { LANGS, VOICE_NAMES, checkVoiceLang } from "../../lib/voices.js";
import { checkTarget, UnsafeUrlError, type SafeFetchOptions } from "../../lib/net/safe-fetch.js";
import { addCharacterRules, CHARACTERS_KEYWORD } from "../../lib/text-rules.js";

export { DEFAULT_SETTINGS, type ProjectRules, type ProjectSettings, type TypeThreshold };

const stringList = { type: "array", maxItems: 200, items: { type: "string", minLength: 1, maxLength: 500, [CHARACTERS_KEYWORD]: "id" } } as const;
const count = { type: "integer", minimum: 0, maximum: 1_000_000_000_000 } as const;
const bucket = {
  type: "object",
  additionalProperties: false,
  properties: {
    perSecond: { type: "number", exclusiveMinimum: 0, maximum: 100_000 },
    burst: { type: "integer", minimum: 1, maximum: 1_000_000 },
  },
} as const;

const schema = {
  type: "object",
  additionalProperties: false,
  required: ["dailyLimit", "creditChars", "defaultVoice", "defaultLang", "rules", "webhook", "recrawl"],
  properties: {
    dailyLimit: { anyOf: [count, { type: "null" }] },
    creditChars: { anyOf: [count, { type: "null" }] },
    defaultVoice: { anyOf: [{ enum: VOICE_NAMES }, { type: "null" }] },
    defaultLang: { anyOf: [{ enum: LANGS }, { type: "null" }] },
    rules: {
      type: "object",
      additionalProperties: false,
      properties: {
        minChars: count,
        maxChars: count,
        urlAllow: stringList,
        urlDeny: stringList,
        labelsInclude: stringList,
        labelsExclude: stringList,
        languages: { type: "array", items: { enum: LANGS } },
        types: {
          type: "object",
          maxProperties: 50,
          additionalProperties: {
            type: "object",
            additionalProperties: false,
            minProperties: 1,
            properties: { min: { type: "number", minimum: 0, maximum: 1 }, max: { type: "number", minimum: 0, maximum: 1 } },
          },
        },
      },
    },
    webhook: {
      anyOf: [
        {
          type: "object",
          additionalProperties: false,
          required: ["url", "secret"],
          properties: {
            url: { type: "string", maxLength: 2048, pattern: "^https?://\\S+$", [CHARACTERS_KEYWORD]: "id" },
            secret: { type: "string", minLength: 16, maxLength: 256 },
          },
        },
        { type: "null" },
      ],
    },
    rateLimit: { type: "object", additionalProperties: false, properties: { reads: bucket, writes: bucket, imports: bucket } },
    loudness: {
      type: "object",
      additionalProperties: false,
      properties: {
        lufs: { type: "number", minimum: LOUDNESS_RANGE.lufs.min, maximum: LOUDNESS_RANGE.lufs.max },
        truePeakDbtp: { type: "number", minimum: LOUDNESS_RANGE.truePeakDbtp.min, maximum: LOUDNESS_RANGE.truePeakDbtp.max },
      },
    },
    audio: { enum: AUDIO_TIMINGS },
    onDemandBudget: {
      type: "object",
      additionalProperties: false,
      properties: {
        perHour: { type: "number", exclusiveMinimum: 0, maximum: 1_000_000 },
        burst: { type: "integer", minimum: 1, maximum: 1_000_000 },
      },
    },
    recrawl: {
      type: "object",
      additionalProperties: false,
      required: ["enabled", "everyMinutes", "maxAgeHours"],
      properties: {
        enabled: { type: "boolean" },
        everyMinutes: { type: "integer", minimum: 5, maximum: 10_080 },
        maxAgeHours: { type: "integer", minimum: 1, maximum: 8_760 },
      },
    },
  },
} as const;

const ajv = new Ajv({ allErrors: true, strict: false });
addCharacterRules(ajv);
const validate = ajv.compile<ProjectSettings>(schema);

export class SettingsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SettingsError";
  }
}

/** "/rules/maxChars" → "rules.maxChars"; the field name people type in the patch. */
function fieldOf(e: ErrorObject): string {
  const path = e.instancePath.replace(/^\//, "").replace(/\//g, ".");
  if (e.keyword === "additionalProperties") {
    const extra = (e.params as { additionalProperty: string }).additionalProperty;
    return path ? `${path}.${extra}` : extra;
  }
  return path || "settings";
}

function describe(errors: ErrorObject[]): string {
  // anyOf reports every branch; the branch-specific messages are the useful ones.
  const useful = errors.filter((e) => e.keyword !== "anyOf" && e.keyword !== "type") ;
  const picked = (useful.length ? useful : errors)[0];
  if (picked.keyword === "additionalProperties") return `${fieldOf(picked)}: unknown setting`;
  if (picked.keyword === "enum") return `${fieldOf(picked)}: must be one of ${(picked.params as { allowedValues: unknown[] }).allowedValues.join(", ")} or null`;
  return `${fieldOf(picked)}: ${picked.message ?? "invalid"}`;
}

/** RFC 7396: objects merge, null removes, anything else replaces. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (patch === null || typeof patch !== "object" || Array.isArray(patch)) return patch;
  const base: Record<string, unknown> = target && typeof target === "object" && !Array.isArray(target) ? { ...(target as Record<string, unknown>) } : {};
  for (const [k, v] of Object.entries(patch as Record<string, unknown>)) {
    if (v === null) delete base[k];
    else base[k] = mergePatch(base[k], v);
  }
  return base;
}

/** Fills absent keys from the defaults, so `null` in a patch means "back to the default". */
function withDefaults(s: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...DEFAULT_SETTINGS, ...s };
  out.recrawl = { ...DEFAULT_SETTINGS.recrawl, ...(s.recrawl as object | undefined) };
  return out;
}

/** Current settings + a JSON merge patch → validated settings; throws SettingsError naming the field. */
export function applySettingsPatch(current: ProjectSettings, patchJson: string): ProjectSettings {
  let patch: unknown;
  try {
    patch = JSON.parse(patchJson);
  } catch {
    throw new SettingsError("patch: not valid JSON");
  }
  if (patch === null || typeof patch !== "object" || Array.isArray(patch)) throw new SettingsError("patch: must be a JSON object");
  const next = withDefaults(mergePatch(current, patch) as Record<string, unknown>);
  if (!validate(next)) throw new SettingsError(describe(validate.errors ?? []));
  return checkSemantics(next);
}

function checkSemantics(s: ProjectSettings): ProjectSettings {
  const r = s.rules;
  if (r.minChars !== undefined && r.maxChars !== undefined && r.minChars > r.maxChars) {
    throw new SettingsError("rules.minChars: must not exceed rules.maxChars");
  }
  for (const [name, t] of Object.entries(r.types ?? {})) {
    if (t.min !== undefined && t.max !== undefined && t.min > t.max) throw new SettingsError(`rules.types.${name}.min: must not exceed max`);
  }
  if (s.defaultVoice && s.defaultLang) {
    const problem = checkVoiceLang(s.defaultVoice, s.defaultLang);
    if (problem) throw new SettingsError(`defaultVoice: ${problem}`);
  }
  if ((s.defaultVoice === null) !== (s.defaultLang === null)) {
    throw new SettingsError(`${s.defaultVoice === null ? "defaultVoice" : "defaultLang"}: defaultVoice and defaultLang are set together`);
  }
  if (s.webhook) {
    try {
      const u = new URL(s.webhook.url);
      if (u.protocol !== "http:" && u.protocol !== "https:") throw new Error();
    } catch {
      throw new SettingsError("webhook.url: must be an absolute http(s) URL");
    }
  }
  return s;
}

/** Which private webhook targets settings:set accepts: FETCH_ALLOW_PRIVATE, as delivery uses it. */
export type WebhookTargetOptions = Pick<SafeFetchOptions, "allowPrivate" | "resolve">;

/**
 * A webhook URL that changes is checked the way delivery will check it, so a
 * private, loopback or metadata address is refused when it is set rather than
 * failing every delivery later. Unchanged URLs are not re-checked: an
 * unrelated change must not fail because of one stored earlier.
 */
export async function checkWebhookTarget(next: ProjectSettings, previous: ProjectSettings | undefined, opts: WebhookTargetOptions = {}): Promise<void> {
  const url = next.webhook?.url;
  if (!url || url === previous?.webhook?.url) return;
  try {
    await checkTarget(url, opts);
  } catch (e) {
    if (!(e instanceof UnsafeUrlError)) throw e;
    const hint = e.code === "blocked_address" ? " (an operator can allow a private receiver with FETCH_ALLOW_PRIVATE=host[:port])" : "";
    throw new SettingsError(`webhook.url: refused, ${e.message}${hint}`);
  }
}

/** Whatever was stored (possibly by an older version) read as a complete settings document. */
export function normalizeStored(s: Partial<ProjectSettings> | undefined, creditChars: number | null): ProjectSettings {
  return { ...(withDefaults({ ...(s ?? {}) }) as unknown as ProjectSettings), creditChars };
}

/** The admin view: the webhook secret is write-only. */
export function redacted(s: ProjectSettings): ProjectSettings {
  return s.webhook ? { ...s, webhook: { url: s.webhook.url, secret: "(set)" } } : s;
}
