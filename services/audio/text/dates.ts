// Calendar dates: 2026-11-22, 11/22/2026, 22.11.2026, "22. November 2026",
// "November 22, 2026", "22 November 2026". Impossible dates are left alone.
import { MONTHS } from "./lang.js";
import { germanOrdinal, ordinal, perLanguage, yearWords, type Key } from "./words.js";

/** Up to this many characters before a match decide German inflection; bounded so long paragraphs stay linear. */
const CONTEXT = 40;

const valid = (d: number, m: number) => d >= 1 && d <= 31 && m >= 1 && m <= 12;

function spoken(key: Key, day: number, month: number, year: number | undefined, before: string, style: "numeric" | "dayFirst" = "numeric"): string {
  const name = MONTHS[key][month - 1];
  if (key === "de") return `${germanOrdinal(day, before, name)} ${name}${year === undefined ? "" : ` ${yearWords(year, key)}`}`;
  const y = year === undefined ? "" : `, ${yearWords(year, key)}`;
  if (style === "dayFirst") {
    // "on 22 November 2026" → "on the twenty-second of November, twenty twenty-six"
    const article = /\bthe\s+$/i.test(before) ? "" : "the ";
    return `${article}${ordinal(key, day)} of ${name}${y}`;
  }
  return `${name} ${ordinal(key, day)}${y}`;
}

interface Rules {
  iso: RegExp;
  slash: RegExp;
  dotted: RegExp;
  dottedNoYear: RegExp;
  monthFirst: RegExp;
  dayFirst: RegExp;
}

const rules = perLanguage((key): Rules => {
  const months = MONTHS[key].join("|");
  return {
    iso: /(?<![\d.\-/])(\d{4})-(\d{2})-(\d{2})(?![\d\-/]|[.,]\d)/g,
    slash: /(?<![\d.\-/])(\d{1,2})\/(\d{1,2})\/(\d{4})(?![\d/]|[.,]\d)/g,
    dotted: /(?<![\d.,])(\d{1,2})\.(\d{1,2})\.(\d{4})(?![\d]|[.,]\d)/g,
    // "am 3.10." needs a word that announces a date, or "Version 3.4." would become one.
    dottedNoYear: /((?:^|[\s(])(?:am|vom|zum|bis|ab|seit|bis zum|Montag|Dienstag|Mittwoch|Donnerstag|Freitag|Samstag|Sonntag),?\s+(?:den\s+)?)(\d{1,2})\.(\d{1,2})\.(?!\d)/gi,
    monthFirst: new RegExp(`\\b(${months})\\s+(\\d{1,2})(?:st|nd|rd|th)?\\b(?![:.,]\\d)(?:,?\\s+(\\d{4})(?![\\d%]|[.,]\\d))?`, "g"),
    dayFirst:
      key === "de"
        ? new RegExp(`(?<![\\d.,])(\\d{1,2})\\.\\s?(${months})\\b(?:\\s+(\\d{4})(?![\\d%]|[.,]\\d))?`, "g")
        : new RegExp(`(?<![\\d.,])\\b(\\d{1,2})(?:st|nd|rd|th)?\\s+(?:of\\s+)?(${months})\\b(?:,?\\s+(\\d{4})(?![\\d%]|[.,]\\d))?`, "g"),
  };
});

export function readDates(text: string, key: Key): string {
  const r = rules(key);
  const before = (s: string, off: number) => s.slice(Math.max(0, off - CONTEXT), off);
  let s = text;
  s = s.replace(r.iso, (m, y: string, mo: string, d: string, off: number, whole: string) =>
    valid(Number(d), Number(mo)) ? spoken(key, Number(d), Number(mo), Number(y), before(whole, off)) : m,
  );
  s = s.replace(r.slash, (m, a: string, b: string, y: string, off: number, whole: string) => {
    // en writes month/day, de day/month; when the preferred order is impossible the other one is meant.
    const [first, second] = key === "en" ? [Number(b), Number(a)] : [Number(a), Number(b)];
    if (valid(first, second)) return spoken(key, first, second, Number(y), before(whole, off));
    if (valid(second, first)) return spoken(key, second, first, Number(y), before(whole, off));
    return m;
  });
  s = s.replace(r.dotted, (m, d: string, mo: string, y: string, off: number, whole: string) =>
    valid(Number(d), Number(mo)) ? spoken(key, Number(d), Number(mo), Number(y), before(whole, off), "dayFirst") : m,
  );
  if (key === "de") {
    s = s.replace(r.dottedNoYear, (m, pre: string, d: string, mo: string, off: number, whole: string) =>
      valid(Number(d), Number(mo)) ? `${pre}${spoken(key, Number(d), Number(mo), undefined, before(whole, off) + pre)}` : m,
    );
  }
  s = s.replace(r.dayFirst, (m, d: string, mo: string, y: string | undefined, off: number, whole: string) => {
    const month = MONTHS[key].indexOf(mo as never) + 1;
    return valid(Number(d), month) ? spoken(key, Number(d), month, y ? Number(y) : undefined, before(whole, off), "dayFirst") : m;
  });
  if (key === "en") {
    s = s.replace(r.monthFirst, (m, mo: string, d: string, y: string | undefined, off: number, whole: string) => {
      const month = MONTHS[key].indexOf(mo as never) + 1;
      return valid(Number(d), month) ? spoken(key, Number(d), month, y ? Number(y) : undefined, before(whole, off)) : m;
    });
  }
  return s;
}
