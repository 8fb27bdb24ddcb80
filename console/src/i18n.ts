// UI strings: console/messages/<lang>.json, one flat object of keys per language.
// A translator copies en.json, translates the values and adds the file to LANGS.
import de from "../messages/de.json" with { type: "json" };
import en from "../messages/en.json" with { type: "json" };

export const LANGS = { en, de } as const;
export type Lang = keyof typeof LANGS;
export type MessageKey = keyof typeof en;

let current: Lang = "en";

export function pickLang(): Lang {
  const saved = localStorage.getItem("console.lang");
  if (saved && saved in LANGS) return saved as Lang;
  for (const l of navigator.languages ?? [navigator.language]) {
    const base = l.toLowerCase().split("-")[0];
    if (base in LANGS) return base as Lang;
  }
  return "en";
}

export function setLang(l: Lang, remember = false): void {
  current = l;
  document.documentElement.lang = l;
  if (remember) localStorage.setItem("console.lang", l);
}

export const lang = (): Lang => current;

/** The message for `key` in the current language (English when missing), with {name} placeholders filled. */
export function t(key: MessageKey, vars?: Record<string, string | number>): string {
  const table = LANGS[current] as Record<string, string>;
  return fill(table[key] ?? (en as Record<string, string>)[key] ?? key, vars);
}

const fill = (s: string, vars?: Record<string, string | number>) => {
  if (vars) for (const [k, v] of Object.entries(vars)) s = s.split(`{${k}}`).join(String(v));
  return s;
};

/** Keys with plural forms: "x.one", "x.other" (and "x.few", "x.many"… where a language has them). */
type PluralKey = { [K in MessageKey]: K extends `${infer B}.other` ? B : never }[MessageKey];
const pluralRules = new Map<string, Intl.PluralRules>();

/**
 * The form of `key` for the count `n` as the language's plural rules choose it (Intl.PluralRules:
 * "1 article", "2 articles"; a language with more forms adds keys), "other" when a form is missing.
 * {n} is the count formatted for the language; `vars` fill the other placeholders.
 */
export function tn(key: PluralKey, n: number, vars?: Record<string, string | number>): string {
  let rules = pluralRules.get(current);
  if (!rules) pluralRules.set(current, (rules = new Intl.PluralRules(locale())));
  const table = LANGS[current] as Record<string, string>;
  const base = en as Record<string, string>;
  const form = `${key}.${rules.select(n)}`;
  return fill(table[form] ?? table[`${key}.other`] ?? base[`${key}.other`] ?? key, { n: fmtNumber(n), ...vars });
}

// Intl formatters are costly to make: one per language, reused (a 100-row list formats 100 dates).
const dateFormats = new Map<string, Intl.DateTimeFormat>();
const numberFormats = new Map<string, Intl.NumberFormat>();
const locale = () => (current === "de" ? "de-DE" : "en-US");

export function fmtDate(unix: number | null | undefined): string {
  if (!unix) return "–";
  let f = dateFormats.get(current);
  if (!f) dateFormats.set(current, (f = new Intl.DateTimeFormat(locale(), { dateStyle: "medium", timeStyle: "short" })));
  return f.format(new Date(unix * 1000));
}

export function fmtNumber(n: number, digits = 0): string {
  const key = `${current}:${digits}`;
  let f = numberFormats.get(key);
  if (!f) numberFormats.set(key, (f = new Intl.NumberFormat(locale(), { maximumFractionDigits: digits })));
  return f.format(n);
}
