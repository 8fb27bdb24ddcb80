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
}
const rules = perLanguage((key): Rules => {
  const { integer, decimal } = numberNotation(key);
  // The integer, then decimals or a dash meaning "no cents" ("10,–", "12.-").
  const amount = `(${integer})(?:[.,]([-–])|${decimal}(\\d+))?`;
  const scale = `(?:\\s?(${SCALES[key]}|k|mn|m|bn|tn)(?![\\p{L}\\d]))?`;
  return {
    before: new RegExp(`(?<![\\p{L}\\d])(${symbolAlt})\\s?${amount}${scale}(?![\\d]|[.,]\\d)`, "gu"),
    after: new RegExp(`(?<![\\p{L}\\d.,])${amount}(?:\\s(${SCALES[key]}))?\\s?(${symbolAlt})(?![\\p{L}\\d])`, "gu"),
  };
});

function amountWords(key: Key, c: Currency, int: string, frac: string | undefined, scale: string | undefined): string {
  const names = c[key];
  const digits = int.replace(/[.,]/g, "");
  if (scale) return `${scaledWords(key, digits, frac, scale)} ${names[1]}`;
  if (frac && (frac.length > 2 || c.noCents)) return `${decimalWords(key, digits, frac)} ${names[1]}`;
  const cents = frac ? Number(frac.padEnd(2, "0")) : 0;
  const whole = digits === "0" && cents ? "" : `${countWords(key, digits, undefined, c.gender)} ${digits === "1" ? names[0] : names[1]}`;
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

export function readMoney(text: string, key: Key): string {
  const r = rules(key);
  return text
    .replace(r.before, (m, sym: string, int: string, dash: string | undefined, frac: string | undefined, scale: string | undefined) => {
      const c = bySymbol.get(sym);
      return c ? amountWords(key, c, int, dash ? undefined : frac, scale) : m;
    })
    .replace(r.after, (m, int: string, dash: string | undefined, frac: string | undefined, scale: string | undefined, sym: string) => {
      const c = bySymbol.get(sym);
      return c ? amountWords(key, c, int, dash ? undefined : frac, scale) : m;
    });
}
