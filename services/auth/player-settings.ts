// A project's player settings: what its podcast feed says about the show and
// which site hosts its oEmbed answers for. Stored beside the project; read by
// the gateway through PlayerService. The document is always complete: absent
// fields take the defaults below.
import { Ajv } from "ajv";
import { completeLook, DEFAULT_LOOK, lookProblem, playerLookSchema, type PlayerLook } from "../../lib/player-look.js";
import { addCharacterRules, CHARACTERS_KEYWORD } from "../../lib/text-rules.js";
import { xmlText } from "../../lib/xml-text.js";

export interface FeedSettings {
  enabled: boolean;
  /** Show title; null: the project's name. */
  title: string | null;
  description: string | null;
  /** Square artwork, 1400–3000 px, JPEG or PNG (Apple Podcasts). */
  imageUrl: string | null;
  author: string | null;
  ownerEmail: string | null;
  /** An Apple Podcasts category, e.g. "News" or "News/Daily News". */
  category: string;
  explicit: boolean;
  /** The feed's <language>, e.g. "de-DE"; null: the locale of the project's default voice. */
  language: string | null;
}

export interface PlayerSettings {
  feed: FeedSettings;
  oembed: { enabled: boolean; hosts: string[] };
  /** How the player looks on every page that embeds it (lib/player-look.ts). */
  look: PlayerLook;
}

export const DEFAULT_PLAYER_SETTINGS: PlayerSettings = Object.freeze({
  feed: { enabled: true, title: null, description: null, imageUrl: null, author: null, ownerEmail: null, category: "News", explicit: false, language: null },
  oembed: { enabled: false, hosts: [] },
  look: DEFAULT_LOOK,
}) as PlayerSettings;

// Everything here may end up in the podcast feed's XML: character rules of lib/text-rules.ts.
const text = (max: number) => ({ anyOf: [{ type: "string", minLength: 1, maxLength: max, pattern: "\\S", [CHARACTERS_KEYWORD]: "text" }, { type: "null" }] });
const httpsUrl = { anyOf: [{ type: "string", maxLength: 2048, pattern: "^https?://[^\\s]+$", [CHARACTERS_KEYWORD]: "id" }, { type: "null" }] };
// No lookahead for the length (Rust's regex has none): maxLength says it.
const HOST = "^([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*(:[0-9]{1,5})?$";

/** Shared with the gateway's OpenAPI document (PUT /api/player). */
export const playerSettingsSchema = {
  type: "object",
  additionalProperties: false,
  properties: {
    feed: {
      type: "object",
      additionalProperties: false,
      properties: {
        enabled: { type: "boolean" },
        title: text(255),
        description: text(4000),
        imageUrl: httpsUrl,
        author: text(255),
        ownerEmail: { anyOf: [{ type: "string", maxLength: 254, pattern: "^[^\\s@]+@[^\\s@]+$", [CHARACTERS_KEYWORD]: "id" }, { type: "null" }] },
        category: { type: "string", minLength: 1, maxLength: 100, pattern: "^[A-Za-z &,'-]+(/[A-Za-z &,'-]+)?$" },
        explicit: { type: "boolean" },
        language: {
          anyOf: [{ type: "string", maxLength: 35, pattern: "^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8}){0,3}$" }, { type: "null" }],
          description: "The feed's language, a language tag such as de or de-DE; null (the default): the locale of the project's default voice.",
        },
      },
    },
    oembed: {
      type: "object",
      additionalProperties: false,
      properties: {
        enabled: { type: "boolean" },
        hosts: { type: "array", maxItems: 20, uniqueItems: true, items: { type: "string", minLength: 1, maxLength: 253, pattern: HOST } },
      },
    },
    look: playerLookSchema,
  },
} as const;

const ajv = new Ajv({ allErrors: false, strict: false });
addCharacterRules(ajv);
const check = ajv.compile(playerSettingsSchema);

export class PlayerSettingsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "PlayerSettingsError";
  }
}

/**
 * A claimed host as written → the host it stands for. Claims carry no scheme:
 * `:443` (https) and `:80` (http) are the default ports and mean the bare
 * host; any other port is a host of its own, verified and matched on that port.
 */
export function normaliseOembedHost(raw: string): string {
  return raw.toLowerCase().replace(/:(443|80)$/, "");
}

/** Normalised, without duplicates (`news.example:443` beside `news.example`); a port outside 1-65535 is refused. */
function oembedHostsOf(hosts: string[]): string[] {
  const out: string[] = [];
  for (const [i, raw] of hosts.entries()) {
    const port = /:(\d+)$/.exec(raw)?.[1];
    if (port !== undefined && (Number(port) < 1 || Number(port) > 65535)) throw new PlayerSettingsError(`oembed.hosts[${i}]: port must be 1-65535`);
    const host = normaliseOembedHost(raw);
    if (!out.includes(host)) out.push(host);
  }
  return out;
}

/** A submitted document (possibly partial) → the complete, validated settings. */
export function completePlayerSettings(input: unknown): PlayerSettings {
  if (!check(input)) {
    const e = check.errors?.[0];
    const field = (e?.instancePath ?? "").replace(/^\//, "").replace(/\//g, ".") || "settings";
    const extra = e?.keyword === "additionalProperties" ? `.${(e.params as { additionalProperty: string }).additionalProperty}` : "";
    throw new PlayerSettingsError(`${field}${extra}: ${e?.keyword === "additionalProperties" ? "unknown setting" : (e?.message ?? "invalid")}`);
  }
  const s = input as { feed?: Partial<FeedSettings>; oembed?: Partial<PlayerSettings["oembed"]>; look?: Parameters<typeof completeLook>[0] };
  const look = completeLook(s.look);
  const problem = lookProblem(look);
  if (problem) throw new PlayerSettingsError(problem);
  return {
    feed: { ...DEFAULT_PLAYER_SETTINGS.feed, ...s.feed },
    oembed: { ...DEFAULT_PLAYER_SETTINGS.oembed, ...s.oembed, hosts: oembedHostsOf(s.oembed?.hosts ?? DEFAULT_PLAYER_SETTINGS.oembed.hosts) },
    look,
  };
}

/** What was stored (maybe by an older version, maybe nothing) read as complete settings. */
export function storedPlayerSettings(stored: Record<string, unknown> | undefined): PlayerSettings {
  try {
    // Rows from before the character rules may hold what XML cannot carry: dropped, not the whole document lost.
    return completePlayerSettings(withoutXmlForbidden(stored ?? {}));
  } catch {
    return structuredClone(DEFAULT_PLAYER_SETTINGS);
  }
}

function withoutXmlForbidden(value: unknown): unknown {
  if (typeof value === "string") return xmlText(value);
  if (Array.isArray(value)) return value.map(withoutXmlForbidden);
  if (value && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, withoutXmlForbidden(v)]));
  return value;
}
