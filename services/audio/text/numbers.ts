// Reads the numbers an article commonly contains: integers, decimals with
// thousands separators, percentages, ordinals, years, dates and clock times.
// Anything it does not recognise is left for the speech engine.
import * as en from "n2words/en-US";
import * as de from "n2words/de-DE";
import { langKey, MONTHS } from "./lang.js";

type Key = "en" | "de";

const WORDS = {
  en: { percent: "percent", dollars: "dollars", euros: "euros", and: "and" },
  de: { percent: "Prozent", dollars: "Dollar", euros: "Euro", and: "und" },
};

/** Integers beyond this are read digit group by digit group by the engine instead. */
const MAX_DIGITS = 15;

function cardinal(key: Key, digits: string): string {
  return key === "de" ? de.toCardinal(digits) : en.toCardinal(digits);
}

/** "3.50" → "three point five zero": decimals are read digit by digit. */
function decimalWords(key: Key, int: string, frac: string): string {
  const digits = [...frac].map((d) => cardinal(key, d)).join(" ");
  return `${cardinal(key, int)} ${key === "de" ? "komma" : "point"} ${digits}`;
}

/** Money with an optional two-digit cent part: "three dollars and fifty cents", "drei Euro fünfzig". */
function moneyWords(key: Key, int: string, cents: string | undefined, unit: "dollar" | "euro"): string {
  const whole = cardinal(key, int);
  const c = cents ? Number(cents.padEnd(2, "0")) : 0;
  if (key === "de") return `${whole} ${unit === "dollar" ? "Dollar" : "Euro"}${c ? ` ${cardinal(key, String(c))}` : ""}`;
  const units = int === "1" ? unit : `${unit}s`;
  return c ? `${whole} ${units} and ${cardinal(key, String(c))} ${c === 1 ? "cent" : "cents"}` : `${whole} ${units}`;
}

function ordinal(key: Key, n: number): string {
  return key === "de" ? de.toOrdinal(n) : en.toOrdinal(n);
}

/** Years as people say them: "nineteen eighty-four", "neunzehnhundertvierundachtzig". */
export function yearWords(year: number, lang: string): string {
  const key = langKey(lang);
  const hi = Math.floor(year / 100);
  const lo = year % 100;
  if (key === "de") {
    if (year >= 1100 && year < 2000) return `${de.toCardinal(hi)}hundert${lo ? de.toCardinal(lo) : ""}`;
    return de.toCardinal(year);
  }
  if (year >= 2000 && year < 2010) return en.toCardinal(year);
  if (year >= 1100 && year < 2100 && (hi % 10 !== 0 || year >= 2010)) {
    if (lo === 0) return `${en.toCardinal(hi)} hundred`;
    return `${en.toCardinal(hi)} ${lo < 10 ? `oh ${en.toCardinal(lo)}` : en.toCardinal(lo)}`;
  }
  return en.toCardinal(year);
}

const monthAlt = (key: Key) => MONTHS[key].join("|");

// Words before a four-digit number that make it a year rather than a count.
const YEAR_CONTEXT = {
  en: "in|since|until|till|by|from|of|during|before|after|around|year|early|late|mid|spring|summer|autumn|fall|winter",
  de: "im|Jahr|Jahre|Jahres|seit|bis|von|ab|vor|nach|um|Anfang|Ende|Mitte|Frühjahr|Sommer|Herbst|Winter",
};

/** German ordinal endings depend on the case; the preceding word is a good enough hint. */
function germanOrdinal(n: number, before: string): string {
  const base = de.toOrdinal(n);
  if (/(^|\s)(am|im|vom|zum|zur|beim|dem|den|des)\s*$/i.test(before)) return `${base}n`;
  if (/(^|\s)(in|an|auf|aus|bei|mit|nach|von|zu|vor|hinter|unter|über|neben|zwischen|seit)\s+(der|dem|den)\s*$/i.test(before)) return `${base}n`;
  if (/(^|\s)(der|die|das)\s*$/i.test(before)) return base;
  return `${base}r`;
}

export function readNumbers(text: string, lang: string): string {
  const key = langKey(lang);
  const w = WORDS[key];
  let s = text;
  const months = monthAlt(key);

  // Dates first, while their digits are still together.
  if (key === "de") {
    s = s.replace(/(?<!\d)(\d{1,2})\.(\d{1,2})\.(\d{4})(?!\d)/g, (m, d: string, mo: string, y: string, off: number) => {
      const day = Number(d), month = Number(mo);
      if (day < 1 || day > 31 || month < 1 || month > 12) return m;
      return `${germanOrdinal(day, s.slice(0, off))} ${MONTHS.de[month - 1]} ${yearWords(Number(y), lang)}`;
    });
    s = s.replace(new RegExp(`(?<![\\d.,])(\\d{1,2})\\.(?=\\s+(?:${months}|Jahrhundert|Jahrtausend|Mal|Platz|Stock|Klasse|Liga|Runde)\\b)`, "g"), (m, d: string, off: number) => {
      const n = Number(d);
      return n >= 1 ? germanOrdinal(n, s.slice(0, off)) : m;
    });
    // After an article a number with a period is an ordinal: "in der 2. Etage".
    s = s.replace(/((?:^|\s)(?:der|die|das|dem|den|des|am|im|zum|zur|vom|beim)\s+)(\d{1,2})\.(?=\s+\p{L})/giu, (m, pre: string, d: string, off: number) => {
      const n = Number(d);
      return n >= 1 ? `${pre}${germanOrdinal(n, s.slice(0, off) + pre)}` : m;
    });
  } else {
    s = s.replace(new RegExp(`\\b(${months})\\s+(\\d{1,2})(?:st|nd|rd|th)?\\b(?!\\s*[:.,]\\d)`, "g"), (m, mo: string, d: string) => {
      const n = Number(d);
      return n >= 1 && n <= 31 ? `${mo} ${ordinal(key, n)}` : m;
    });
    s = s.replace(/\b(\d{1,3}(?:,\d{3})*|\d+)(st|nd|rd|th)\b/gi, (m, d: string) => {
      const n = Number(d.replace(/,/g, ""));
      return n >= 1 && Number.isSafeInteger(n) ? ordinal(key, n) : m;
    });
  }

  // Clock times: "10:30" / "10:30 Uhr".
  s = s.replace(/(?<![\d:.,])([01]?\d|2[0-3]):([0-5]\d)(?![\d:])(\s*Uhr\b)?/g, (_m, h: string, mi: string, uhr?: string) => {
    const hh = Number(h), mm = Number(mi);
    // "Uhr" is said between hours and minutes whether or not it was written.
    void uhr;
    if (key === "de") return `${de.toCardinal(hh)} Uhr${mm ? ` ${de.toCardinal(mm)}` : ""}`;
    if (mm === 0) return `${en.toCardinal(hh)} o'clock`;
    return `${en.toCardinal(hh)} ${mm < 10 ? `oh ${en.toCardinal(mm)}` : en.toCardinal(mm)}`;
  });

  // Years after a month or a year word.
  s = s.replace(new RegExp(`((?:^|[\\s(])(?:${months}|${YEAR_CONTEXT[key]})(?:\\s+\\S+)?,?\\s+)(\\d{4})(?![\\d%]|\\p{L})(?![.,]\\d)`, "gu"), (m, pre: string, y: string) => {
    const n = Number(y);
    return n >= 1000 && n < 2100 ? `${pre}${yearWords(n, lang)}` : m;
  });

  // Decades: "the 1990s" / "the '90s" are rare enough in German to skip there.
  if (key === "en") {
    s = s.replace(/\b(1[1-9]|20)(\d)0s\b/g, (_m, c: string, d: string) => {
      const words = yearWords(Number(`${c}${d}0`), lang);
      return words.endsWith("y") ? `${words.slice(0, -1)}ies` : `${words}s`;
    });
  }

  // Ranges between numbers: "10-20" / "10–20".
  s = s.replace(/(?<![\p{L}\d-])(\d+)\s?[–-]\s?(\d+)(?![\p{L}\d-])/gu, `$1 ${key === "de" ? "bis" : "to"} $2`);

  // Currency: "$3.50", "3,50 €", "€5", "$1.5 million" (the scale word keeps the number as it is).
  const group = key === "de" ? "\\." : ",";
  const decimal = key === "de" ? "," : "\\.";
  const amount = `(\\d{1,3}(?:${group}\\d{3})+|\\d+)(?:${decimal}(\\d{1,2}))?(?![\\d]|[.,]\\d)`;
  const scale = key === "de" ? "Millionen|Milliarden|Mio\\.|Mrd\\." : "thousand|million|billion|trillion";
  const scaled = `(\\d[\\d,.]*\\d|\\d)\\s+(${scale})`;
  const unitWord = (unit: "dollar" | "euro") => (key === "de" ? (unit === "dollar" ? "Dollar" : "Euro") : `${unit}s`);
  s = s.replace(new RegExp(`\\$\\s?${scaled}`, "g"), (_m, n: string, sc: string) => `${n} ${sc} ${unitWord("dollar")}`);
  s = s.replace(new RegExp(`€\\s?${scaled}`, "g"), (_m, n: string, sc: string) => `${n} ${sc} ${unitWord("euro")}`);
  s = s.replace(new RegExp(`${scaled}\\s?€`, "g"), (_m, n: string, sc: string) => `${n} ${sc} ${unitWord("euro")}`);
  const money = (unit: "dollar" | "euro") => (_m: string, int: string, cents?: string) => moneyWords(key, int.replace(/[.,]/g, ""), cents, unit);
  s = s.replace(new RegExp(`\\$\\s?${amount}`, "g"), money("dollar"));
  s = s.replace(new RegExp(`€\\s?${amount}`, "g"), money("euro"));
  s = s.replace(new RegExp(`(?<![\\d.,])${amount}\\s?€`, "g"), money("euro"));
  s = s.replace(/(\d)\s?%/g, `$1 ${w.percent}`);
  s = s.replace(/\s&\s/g, ` ${w.and} `);

  // Plain numbers with the language's separators: en 1,234.5 / de 1.234,5.
  const num = new RegExp(`(?<![\\p{L}\\d.,:/-])(-?)(\\d{1,3}(?:${group}\\d{3})+|\\d+)(?:${decimal}(\\d+))?(?![\\p{L}\\d]|[.,]\\d)`, "gu");
  s = s.replace(num, (m, sign: string, int: string, frac?: string) => {
    const digits = int.replace(/[.,]/g, "");
    if (digits.length > MAX_DIGITS || (digits.length > 1 && digits.startsWith("0") && !frac)) return m;
    if (!frac && digits.length === 4 && !int.match(/[.,]/)) {
      // A lone four-digit number in a year's range reads best as a year.
      const n = Number(digits);
      if (!sign && n >= 1100 && n < 2000) return yearWords(n, lang);
    }
    const words = frac ? decimalWords(key, digits, frac) : cardinal(key, digits);
    return (sign ? "minus " : "") + words;
  });
  return s;
}
