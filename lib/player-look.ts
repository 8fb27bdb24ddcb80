// The player's look as a project designs it (console "Player design", PUT /api/player `look`),
// and what it resolves to: the CSS custom properties gateway/player/player.js already reads, a
// layout and the controls shown. Kept free of Node.js APIs: the console imports it for its live
// preview and contrast check, the auth service for validation, the gateway for lookups.

export type Scheme = "auto" | "light" | "dark";
export type Layout = "full" | "compact";
export const CONTROLS = ["seek", "time", "back", "speed"] as const;
export type Control = (typeof CONTROLS)[number];

export interface PlayerLook {
  /** The play button and the progress bar, as #rrggbb; null: the built-in blue of the scheme. */
  accent: string | null;
  /** The player's box, as #rrggbb; null: the scheme's own. */
  background: string | null;
  /** auto follows the listener's system setting. */
  scheme: Scheme;
  /** compact: one row, the title only as the region's name. */
  layout: Layout;
  /** Which controls show beside play (which always shows). */
  controls: Record<Control, boolean>;
  /** Corner radius of the box in px. */
  radius: number;
}

export const DEFAULT_LOOK: PlayerLook = Object.freeze({
  accent: null,
  background: null,
  scheme: "auto",
  layout: "full",
  controls: Object.freeze({ seek: true, time: true, back: true, speed: true }),
  radius: 12,
}) as PlayerLook;

/** WCAG 2's minimum for text: the title and time on the background, the play icon on the accent. */
export const MIN_TEXT_CONTRAST = 4.5;
/** WCAG 2's minimum for a control against what surrounds it (1.4.11): the accent on the background. */
export const MIN_CONTROL_CONTRAST = 3;

const COLOUR = "^#[0-9a-fA-F]{6}$";
export const playerLookSchema = {
  type: "object",
  additionalProperties: false,
  properties: {
    accent: { anyOf: [{ type: "string", pattern: COLOUR }, { type: "null" }], description: "The play button and progress bar colour (#rrggbb); null: the built-in blue." },
    background: { anyOf: [{ type: "string", pattern: COLOUR }, { type: "null" }], description: "The player's background (#rrggbb); null: the scheme's own." },
    scheme: { enum: ["auto", "light", "dark"], description: "auto follows the listener's system setting." },
    layout: { enum: ["full", "compact"], description: "compact: one row without the title line." },
    controls: {
      type: "object",
      additionalProperties: false,
      properties: Object.fromEntries(CONTROLS.map((c) => [c, { type: "boolean" }])),
      description: "Which controls show beside play: seek, time, back (15 s), speed.",
    },
    radius: { type: "integer", minimum: 0, maximum: 24, description: "Corner radius of the player in px." },
  },
} as const;

/** The built-in palettes (what player.js falls back to), by scheme. */
const PALETTES = {
  light: { fg: "#1d1d1f", bg: "#f4f4f6", accent: "#1a73e8" },
  dark: { fg: "#f2f2f7", bg: "#1f1f24", accent: "#8ab4f8" },
} as const;
const INK = { dark: "#101014", light: "#ffffff" };

function luminance(hex: string): number {
  const channel = (i: number) => {
    const c = parseInt(hex.slice(i, i + 2), 16) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * channel(1) + 0.7152 * channel(3) + 0.0722 * channel(5);
}

/** WCAG 2 contrast ratio of two #rrggbb colours, 1 to 21. */
export function contrast(a: string, b: string): number {
  const [x, y] = [luminance(a), luminance(b)].sort((p, q) => q - p);
  return (x + 0.05) / (y + 0.05);
}

/** Dark or light ink, whichever reads better on `bg`. */
const inkOn = (bg: string) => (contrast(INK.dark, bg) >= contrast(INK.light, bg) ? INK.dark : INK.light);

/** The schemes a listener may see the player in. */
const schemesOf = (look: PlayerLook): Array<"light" | "dark"> => (look.scheme === "auto" ? ["light", "dark"] : [look.scheme]);

export interface ContrastCheck {
  scheme: "light" | "dark";
  /** Text on the background, the play icon on the accent, and the accent on the background. */
  text: number;
  icon: number;
  accent: number;
  ok: boolean;
}

/** The contrasts each scheme the look can show in will have. */
export function checkContrast(look: PlayerLook): ContrastCheck[] {
  return schemesOf(look).map((scheme) => {
    const bg = look.background ?? PALETTES[scheme].bg;
    const accent = look.accent ?? PALETTES[scheme].accent;
    const fg = look.background ? inkOn(bg) : PALETTES[scheme].fg;
    const c = { scheme, text: contrast(fg, bg), icon: contrast(inkOn(accent), accent), accent: contrast(accent, bg) };
    return { ...c, ok: c.text >= MIN_TEXT_CONTRAST && c.icon >= MIN_TEXT_CONTRAST && c.accent >= MIN_CONTROL_CONTRAST };
  });
}

const ratio = (n: number) => `${n.toFixed(2)}:1`;

/** Why a look cannot be saved, naming the setting; null when it can. */
export function lookProblem(look: PlayerLook): string | null {
  const bad = checkContrast(look).find((c) => !c.ok);
  if (!bad) return null;
  const where = look.scheme === "auto" ? ` in the ${bad.scheme} scheme` : "";
  if (bad.accent < MIN_CONTROL_CONTRAST) return `look.accent: the play button stands out from the background by only ${ratio(bad.accent)}${where}; at least ${MIN_CONTROL_CONTRAST}:1 is needed`;
  if (bad.icon < MIN_TEXT_CONTRAST) return `look.accent: the play icon on it reaches only ${ratio(bad.icon)}; at least ${MIN_TEXT_CONTRAST}:1 is needed`;
  return `look.background: text on it reaches only ${ratio(bad.text)}${where}; at least ${MIN_TEXT_CONTRAST}:1 is needed`;
}

/** What the player is sent: only what differs from its built-in look, so an unset look costs nothing. */
export interface ResolvedLook {
  /** CSS custom properties for the player's host, e.g. {"--aap-accent": "#0b57d0"}; the page's own rules still win. */
  vars: Record<string, string>;
  layout: Layout;
  hide: Control[];
}

export function resolveLook(look: PlayerLook): ResolvedLook {
  const vars: Record<string, string> = {};
  // A fixed scheme sets the whole palette, so the listener's system setting no longer changes it.
  if (look.scheme !== "auto") {
    const p = PALETTES[look.scheme];
    Object.assign(vars, { "--aap-fg": p.fg, "--aap-bg": p.bg, "--aap-accent": p.accent, "--aap-focus": p.accent, "--aap-on-accent": inkOn(p.accent) });
  }
  if (look.background) Object.assign(vars, { "--aap-bg": look.background, "--aap-fg": inkOn(look.background) });
  if (look.accent) Object.assign(vars, { "--aap-accent": look.accent, "--aap-focus": look.accent, "--aap-on-accent": inkOn(look.accent) });
  if (look.radius !== DEFAULT_LOOK.radius) vars["--aap-radius"] = `${look.radius}px`;
  return { vars, layout: look.layout, hide: CONTROLS.filter((c) => !look.controls[c]) };
}

/** A submitted (partial) look completed with the defaults. */
export function completeLook(input: Partial<Omit<PlayerLook, "controls">> & { controls?: Partial<PlayerLook["controls"]> } | undefined): PlayerLook {
  return { ...DEFAULT_LOOK, ...input, controls: { ...DEFAULT_LOOK.controls, ...input?.controls } };
}
