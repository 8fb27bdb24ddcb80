// Reads the numbers an article commonly contains. Specific forms go first,
// while their digits and separators are still together: dates, clock times,
// phone numbers, ranges, money, measurements, ordinals; whatever is left is a
// plain number in the language's notation (en 1,234.5 / de 1.234,5).
// Anything it does not recognise is left for the speech engine.
import { readDates } from "./dates.js";
import { readSlashedNumbers } from "./fractions.js";
import { langKey, MONTHS } from "./lang.js";
import { readMoney } from "./money.js";
import { readPhoneNumbers } from "./phones.js";
import { readTimes } from "./times.js";
import { readMeasures } from "./units.js";
import { cardinal, countWords, decimalWords, digitWords, germanGender, germanOrdinal, MAX_DIGITS, numberNotation, ordinal, perLanguage, yearWords as yearWordsFor, type Key } from "./words.js";

/** Up to this many characters before a match decide German inflection; bounded so long paragraphs stay linear. */
const CONTEXT = 40;

/** Years as people say them: "nineteen eighty-four", "neunzehnhundertvierundachtzig". */
export function yearWords(year: number, lang: string): string {
  return yearWordsFor(year, langKey(lang));
}

// Words before a four-digit number that make it a year rather than a count.
const YEAR_CONTEXT = {
  en: "in|since|until|till|by|from|of|during|before|after|around|year|early|late|mid|spring|summer|autumn|fall|winter",
  de: "im|Jahr|Jahre|Jahres|seit|bis|von|ab|vor|nach|um|Anfang|Ende|Mitte|Frühjahr|Sommer|Herbst|Winter",
};

// Nouns after "3." that make it a German ordinal even without an article.
const DE_ORDINAL_NOUNS =
  "Jahrhunderts?|Jahrtausends?|Mal|Male|Platz|Rang|Stock|Stockwerk|Klasse|Liga|Bundesliga|Runde|Etage|Quartal|Halbjahr|Kapitel|Auflage|Advent|Weltkrieg|FC|Woche|Lesung|Stelle|Sinfonie|Halbzeit|Satz|Instanz|Spieltag|Geburtstag|Jahrestag|Todestag|Tag|Preis|Versuch|Akt|Teil|Band|Staffel|Folge|Amtszeit|Wahlgang|Reihe";

const DE_ORDINAL_BEFORE_NOUN = new RegExp(`(?<![\\d.,])(\\d{1,3})\\.(?=\\s+((?:${DE_ORDINAL_NOUNS})\\b|\\p{L}+(?:tag|platz|liga|runde)\\b))`, "gu");

interface Rules {
  yearAfterContext: RegExp;
  range: RegExp;
  plain: RegExp;
}
const rules = perLanguage((key): Rules => {
  const { integer, decimal } = numberNotation(key);
  const num = `(?:${integer})(?:${decimal}\\d+)?`;
  return {
    yearAfterContext: new RegExp(
      `((?:^|[\\s(])(?:${MONTHS[key].join("|")}|${YEAR_CONTEXT[key]})(?:\\s+\\S+)?,?\\s+)(\\d{4})(?![\\d%]|\\p{L}|[.,]\\d|\\s?(?:%|[-–]\\d))`,
      "giu",
    ),
    range: new RegExp(`(?<![\\p{L}\\d.,\\-–/])(${num})\\s?[–-]\\s?(${num})(?![\\p{L}\\d\\-–]|[.,]\\d)`, "gu"),
    plain: new RegExp(`(?<![\\p{L}\\d.,:/\\-–−])([-−+]?)(${integer})(?:${decimal}(\\d+))?(?![\\p{L}\\d]|[.,:/\\-–]\\d)`, "gu"),
  };
});

/** Value of a number written in the language's notation, for comparing the ends of a range. */
function valueOf(key: Key, written: string): number {
  return Number(key === "de" ? written.replace(/\./g, "").replace(",", ".") : written.replace(/,/g, ""));
}

/**
 * A lowercase English word ending in "s" after a four-digit number is mostly a
 * plural noun that makes it a count ("1600 hours", "2050 units"); these are not.
 */
const NOT_PLURAL_NOUN = new Set(
  "was has is as its his hers this thus plus less unless across always perhaps whereas besides towards afterwards nevertheless yes does goes us ours yours theirs".split(" "),
);
const PLURAL_WITHOUT_S = new Set("people children men women staff feet police personnel cattle sheep fish deer".split(" "));
const countsNoun = (after: string) => {
  const w = /^\s+(\p{Ll}+)\b/u.exec(after)?.[1];
  if (w === undefined) return false;
  if (PLURAL_WITHOUT_S.has(w)) return true;
  return w.endsWith("s") && w.length > 3 && !NOT_PLURAL_NOUN.has(w) && !/(?:ss|ous|ics)$/.test(w);
};

// "10115 Berlin": five undivided digits before a capitalised word are a German postcode;
// "DC 20500", "CA 94103-1234": a US ZIP code after a state.
const DE_POSTCODE = /(?<![\p{L}\d.,:/-])(\d{5})(?=\s+\p{Lu}\p{Ll})/gu;
const EN_ZIP = /(?<=\b[A-Z]{2}\s)(\d{5})(?:-(\d{4}))?(?![\p{L}\d]|[.,]\d)/gu;

function readOrdinals(s: string, key: Key): string {
  if (key === "en") {
    return s.replace(/\b(\d{1,3}(?:,\d{3})+|\d+)(st|nd|rd|th)\b/gi, (m, d: string) => {
      const n = Number(d.replace(/,/g, ""));
      return n >= 1 && Number.isSafeInteger(n) ? ordinal(key, n) : m;
    });
  }
  const before = (whole: string, off: number) => whole.slice(Math.max(0, off - CONTEXT), off);
  s = s.replace(DE_ORDINAL_BEFORE_NOUN, (m, d: string, next: string, off: number, whole: string) => {
    const n = Number(d);
    return n >= 1 ? germanOrdinal(n, before(whole, off), next) : m;
  });
  // After an article or a contraction a number with a period is an ordinal: "in der 2. Etage", "ein 3. Versuch".
  return s.replace(/((?:^|[\s(])(?:der|die|das|dem|den|des|am|im|zum|zur|vom|beim|ein|eine|einen|einem|einer|kein|keine)\s+)(\d{1,3})\.(?=\s+(\p{L}+))/giu, (m, pre: string, d: string, next: string, off: number, whole: string) => {
    const n = Number(d);
    return n >= 1 ? `${pre}${germanOrdinal(n, before(whole, off) + pre, next)}` : m;
  });
}

function readDecades(s: string, key: Key): string {
  if (key === "en") {
    s = s.replace(/\b(1[1-9]|20)(\d)0s\b/g, (_m, c: string, d: string) => plural(yearWordsFor(Number(`${c}${d}0`), key)));
    // "the '90s", "the 80s": decades of the last century.
    return s.replace(/(?<![\p{L}\d])['’]?([2-9])0s\b/gu, (_m, d: string) => plural(cardinal(key, `${d}0`)));
  }
  // "1990er", "90er Jahre", "2000er": the year or tens word plus "-er".
  return s.replace(/(?<![\p{L}\d.,])(\d{2,4})er(?=\b|[-–])/gu, (m, d: string) => {
    if (!d.endsWith("0")) return m;
    const n = Number(d);
    const words = d.length === 4 ? yearWordsFor(n, key) : cardinal(key, n);
    return `${words}er`;
  });
}

const plural = (words: string) => (words.endsWith("y") ? `${words.slice(0, -1)}ies` : `${words}s`);

export function readNumbers(text: string, lang: string): string {
  const key = langKey(lang);
  const r = rules(key);
  let s = text;

  s = readDates(s, key);
  s = readTimes(s, key);
  s = readPhoneNumbers(s, key);
  s = key === "de" ? s.replace(DE_POSTCODE, (d: string) => digitWords(key, d)) : s.replace(EN_ZIP, (_m, d: string, ext?: string) => digitWords(key, d) + (ext ? `, ${digitWords(key, ext)}` : ""));
  s = readSlashedNumbers(s, key);

  // Ranges: "10-20" / "10–20" → "10 to 20" (the ends are read below). When the
  // first is not smaller it is a score or a vote ("3-1", "218-214"): "to" in
  // English, "zu" in German. "2023-24" is a season.
  s = s.replace(r.range, (_m, a: string, b: string) => {
    const x = valueOf(key, a), y = valueOf(key, b);
    const season = a.length === 4 && b.length === 2 && y > x % 100;
    if (x < y || season) return `${a} ${key === "de" ? "bis" : "to"} ${b}`;
    return `${a} ${key === "de" ? "zu" : "to"} ${b}`;
  });
  // Scores and ratios with a one-digit second part ("2:1"); longer ones were clock times.
  s = s.replace(/(?<![\d:.,])(\d{1,2}):(\d)(?![\d:]|[.,]\d)/g, `$1 ${key === "de" ? "zu" : "to"} $2`);

  s = readMoney(s, key);
  s = readMeasures(s, key);
  s = readOrdinals(s, key);

  s = s.replace(r.yearAfterContext, (m, pre: string, y: string, off: number, whole: string) => {
    const n = Number(y);
    if (n < 1000 || n >= 2100) return m;
    // "um 1500 Stellen", "nach 1200 Kilometern": these prepositions also take counts, which a noun gives away.
    if (key === "de" && /(?:^|[\s(])(?:von|ab|bis|um|vor|nach)\s+$/i.test(pre) && /^\s+\p{Lu}/u.test(whole.slice(off + m.length, off + m.length + 3))) return m;
    if (key === "en" && countsNoun(whole.slice(off + m.length, off + m.length + 24))) return m;
    return `${pre}${yearWordsFor(n, key)}`;
  });
  s = readDecades(s, key);

  // "COVID-19", "F-16", "pre-2020": the hyphen joins a name to a number that is read on its own.
  s = s.replace(/(\p{L})-(?=\d+(?![\p{L}\d]|[.,:\/-]\d))/gu, "$1 ");
  s = s.replace(/(?<![\p{L}\d])#(?=\d)/gu, key === "de" ? "Nummer " : "number ");
  s = s.replace(/§§\s?(?=\d)/g, key === "de" ? "Paragrafen " : "sections ").replace(/§\s?(?=\d)/g, key === "de" ? "Paragraf " : "section ");

  if (key === "de") {
    // "1 Mio. Euro" arrives as "1 Millionen Euro": one takes the singular.
    s = s.replace(/(?<![\p{L}\d.,])1\s+(Million|Milliarde|Billion)(?:en|n)?(?!\p{L})/gu, "eine $1");
  }
  s = s.replace(r.plain, (m, sign: string, int: string, frac: string | undefined, off: number, whole: string) => {
    const digits = int.replace(/[.,]/g, "");
    if (digits.length > MAX_DIGITS || (digits.length > 1 && digits.startsWith("0") && !frac)) return m;
    const after = whole.slice(off + m.length, off + m.length + 40);
    if (!sign && !frac && digits.length === 4 && digits === int) {
      // A bare four-digit number in the range of years reads best as a year;
      // in German only when no noun follows ("1500 Menschen" is a count).
      const n = Number(digits);
      if (n >= 1100 && n < 2100 && !(key === "de" ? /^\s+\p{Lu}/u.test(after) : countsNoun(after))) return yearWordsFor(n, key);
    }
    let words: string;
    if (frac) words = decimalWords(key, digits, frac);
    else if (key === "de") {
      // Before a noun German says "ein Kind", "eine Stunde", "hundertein Tage", not "eins".
      const noun = /^\s+(\p{Lu}\p{Ll}+)/u.exec(after)?.[1];
      words = noun ? countWords(key, digits, undefined, germanGender(noun), whole.slice(Math.max(0, off - CONTEXT), off)) : cardinal(key, digits);
    } else words = cardinal(key, digits);
    const prefix = sign === "+" ? "plus " : sign ? "minus " : "";
    return prefix + words;
  });
  return s;
}
