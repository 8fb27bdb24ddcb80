// Amounts of money: "$5", "$5.50", "€3,50", "3,50 €", "10 EUR", "£2m",
// "CHF 12.–", "$1.5 billion". Symbols and codes may stand before or after.
import { cardinal, countWords, decimalWords, numberNotation, perLanguage, type Gender, type Key } from "./words.js";

interface Currency {
  symbols: string[];
  en: [one: string, many: string, cent: string, cents: string];
  de: [one: string, many: string, cent: string, cents: string];
  gender: Gender;
  /** Some currencies have no minor unit in speech. */
  noCents?: boolean;
}

const CURRENCIES: Currency[] = [
  { symbols: ["US$", "$", "USD"], en: ["dollar", "dollars", "cent", "cents"], de: ["Dollar", "Dollar", "Cent", "Cent"], gender: "m" },
  { symbols: ["€", "EUR"], en: ["euro", "euros", "cent", "cents"], de: ["Euro", "Euro", "Cent", "Cent"], gender: "m" },
  { symbols: ["£", "GBP"], en: ["pound", "pounds", "penny", "pence"], de: ["Pfund", "Pfund", "Penny", "Pence"], gender: "n" },
  { symbols: ["CHF", "Fr."], en: ["Swiss franc", "Swiss francs", "centime", "centimes"], de: ["Franken", "Franken", "Rappen", "Rappen"], gender: "m" },
  { symbols: ["¥", "JPY"], en: ["yen", "yen", "", ""], de: ["Yen", "Yen", "", ""], gender: "m", noCents: true },
];

const bySymbol = new Map(CURRENCIES.flatMap((c) => c.symbols.map((s) => [s, c] as const)));

// Currencies written as a word after the amount ("12,50 Euro", "3.50 dollars"): read like the
// symbol, so the cents are said as cents. Only after it: "Euro 2024" is a tournament.
const WORDS: Record<Key, Record<string, Currency>> = {
  en: { dollars: CURRENCIES[0], dollar: CURRENCIES[0], euros: CURRENCIES[1], euro: CURRENCIES[1], francs: CURRENCIES[3], yen: CURRENCIES[4] },
  de: { Euro: CURRENCIES[1], Dollar: CURRENCIES[0], "US-Dollar": CURRENCIES[0], Franken: CURRENCIES[3], Yen: CURRENCIES[4] },
};
const byWord = (key: Key, w: string) => WORDS[key][w];

/**
 * Words that may follow an amount without making it an adjective. Any other
 * lowercase word is the noun the amount describes: "a $412,500 home" is a
 * "dollar home", not a "dollars home".
 */
const NOT_A_NOUN = new Set(
  "a an the and or but nor for to of in on at by with without from into onto over under per each apiece more less than as so if is was were are be been being will would could should can may might must has had have that which who whom whose when while after before since until because this next last every back now then up down off out instead total overall worth plus minus alone too also already still just only even yet".split(" "),
);
const describesNoun = (after: string) => {
  const w = /^\s+(\p{Ll}+)(?![\p{L}'’])/u.exec(after)?.[1];
  return w !== undefined && !NOT_A_NOUN.has(w) && !/(?:ly|ed|ing)$/.test(w);
};

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
// Letter codes need word boundaries ("EURO" or "USDA" are not amounts); symbols do not.
const symbolAlt = [...bySymbol.keys()]
  .sort((a, b) => b.length - a.length)
  .map((s) => (/^[A-Z]/.test(s) ? `${escape(s)}(?![\\p{L}])` : escape(s)))
  .join("|");

const SCALES = {
  en: "thousand|million|billion|trillion",
  de: "Tausend|Millionen|Million|Milliarden|Milliarde|Billionen|Billion",
};
/** Newsroom shorthand after an amount: "$5m", "£2bn", "$10k". */
const SHORT_SCALE: Record<string, string> = { k: "thousand", m: "million", mn: "million", bn: "billion", tn: "trillion" };

interface Rules {
  before: RegExp;
  after: RegExp;
  word: RegExp;
}
const rules = perLanguage((key): Rules => {
  const { integer, decimal } = numberNotation(key);
  // The integer, then decimals or a dash meaning "no cents" ("10,–", "12.-").
  const amount = `(${integer})(?:[.,]([-–])|${decimal}(\\d+))?`;
  const scale = `(?:\\s?(${SCALES[key]}|k|mn|m|bn|tn)(?![\\p{L}\\d]))?`;
  const words = Object.keys(WORDS[key]).map(escape).join("|");
  return {
    before: new RegExp(`(?<![\\p{L}\\d])(${symbolAlt})\\s?${amount}${scale}(?![\\d]|[.,]\\d)`, "gu"),
    after: new RegExp(`(?<![\\p{L}\\d.,])${amount}(?:\\s(${SCALES[key]}))?\\s?(${symbolAlt})(?![\\p{L}\\d])`, "gu"),
    // Only with cents: "12 Euro" is already read right as a number before a noun.
    word: new RegExp(`(?<![\\p{L}\\d.,])(${integer})${decimal}(\\d{2})(?:\\s(${SCALES[key]}))?\\s(${words})(?![\\p{L}\\d-])`, "gu"),
  };
});

function amountWords(key: Key, c: Currency, int: string, frac: string | undefined, scale: string | undefined, before = "", after = ""): string {
  const names = c[key];
  const digits = int.replace(/[.,]/g, "");
  // Before a noun English uses the singular: "a $5 million deal", "a $412,500 home".
  const adjective = key === "en" && !(frac && !scale) && describesNoun(after);
  if (adjective) return `${scale ? scaledWords(key, digits, frac, scale) : cardinal(key, digits)} ${names[0]}`;
  if (scale) return `${scaledWords(key, digits, frac, scale)} ${names[1]}`;
  if (frac && (frac.length > 2 || c.noCents)) return `${decimalWords(key, digits, frac)} ${names[1]}`;
  const cents = frac ? Number(frac.padEnd(2, "0")) : 0;
  const whole = digits === "0" && cents ? "" : `${countWords(key, digits, undefined, c.gender, before)} ${digits === "1" ? names[0] : names[1]}`;
  if (!cents) return whole;
  if (key === "de") return whole ? `${whole} ${cardinal(key, cents)}` : `${countWords(key, String(cents), undefined, c.gender)} ${cents === 1 ? names[2] : names[3]}`;
  const centWords = `${cardinal(key, cents)} ${cents === 1 ? names[2] : names[3]}`;
  return whole ? `${whole} and ${centWords}` : centWords;
}

/** Scale words by their English name: German "Milliarde" is an English billion. */
const SCALE_KEY: Record<string, string> = {
  k: "thousand", thousand: "thousand", Tausend: "thousand",
  m: "million", mn: "million", million: "million", Million: "million", Millionen: "million",
  bn: "billion", billion: "billion", Milliarde: "billion", Milliarden: "billion",
  tn: "trillion", trillion: "trillion", Billion: "trillion", Billionen: "trillion",
};
const GERMAN_SCALE: Record<string, [one: string, many: string]> = {
  thousand: ["eintausend", "tausend"],
  million: ["eine Million", "Millionen"],
  billion: ["eine Milliarde", "Milliarden"],
  trillion: ["eine Billion", "Billionen"],
};

/** "one point five million", "eine Million", "zwei Komma fünf Milliarden". */
function scaledWords(key: Key, digits: string, frac: string | undefined, scale: string): string {
  const name = SCALE_KEY[scale] ?? "million";
  const n = frac ? decimalWords(key, digits, frac) : cardinal(key, digits);
  if (key === "en") return `${n} ${name}`;
  const [one, many] = GERMAN_SCALE[name];
  if (digits === "1" && !frac) return one;
  return name === "thousand" && !frac ? `${n}${many}` : `${n} ${many}`;
}

const CONTEXT = 40;

export function readMoney(text: string, key: Key): string {
  const r = rules(key);
  const before = (whole: string, off: number) => whole.slice(Math.max(0, off - CONTEXT), off);
  const after = (whole: string, end: number) => whole.slice(end, end + 24);
  return text
    .replace(r.before, (m, sym: string, int: string, dash: string | undefined, frac: string | undefined, scale: string | undefined, off: number, whole: string) => {
      const c = bySymbol.get(sym);
      return c ? amountWords(key, c, int, dash ? undefined : frac, scale, before(whole, off), after(whole, off + m.length)) : m;
    })
    .replace(r.after, (m, int: string, dash: string | undefined, frac: string | undefined, scale: string | undefined, sym: string, off: number, whole: string) => {
      const c = bySymbol.get(sym);
      return c ? amountWords(key, c, int, dash ? undefined : frac, scale, before(whole, off), after(whole, off + m.length)) : m;
    })
    .replace(r.word, (m, int: string, frac: string, scale: string | undefined, word: string, off: number, whole: string) => {
      const c = byWord(key, word);
      return c ? amountWords(key, c, int, frac, scale, before(whole, off), after(whole, off + m.length)) : m;
    });
}
