// Measurements: a number followed by a unit symbol ("3.5 km", "20 °C",
// "50 km/h", "12%", "1 kWh"). Symbols are only read after a number, so a
// lone "m" or "g" in a sentence is never touched.
import { countWords, numberNotation, perLanguage, type Gender, type Key } from "./words.js";

interface Unit {
  symbol: string;
  en: [one: string, many: string];
  de: [one: string, many: string];
  gender: Gender;
  /** Single letters that are also words or abbreviations need a space before them ("5 m", not "5m"). */
  spaced?: boolean;
}

const UNITS: Unit[] = [
  { symbol: "km/h", en: ["kilometer per hour", "kilometers per hour"], de: ["Kilometer pro Stunde", "Kilometer pro Stunde"], gender: "m" },
  { symbol: "mpg", en: ["mile per gallon", "miles per gallon"], de: ["Meile pro Gallone", "Meilen pro Gallone"], gender: "f" },
  { symbol: "mph", en: ["mile per hour", "miles per hour"], de: ["Meile pro Stunde", "Meilen pro Stunde"], gender: "f" },
  { symbol: "km²", en: ["square kilometer", "square kilometers"], de: ["Quadratkilometer", "Quadratkilometer"], gender: "m" },
  { symbol: "m²", en: ["square meter", "square meters"], de: ["Quadratmeter", "Quadratmeter"], gender: "m" },
  { symbol: "qm", en: ["square meter", "square meters"], de: ["Quadratmeter", "Quadratmeter"], gender: "m" },
  { symbol: "m³", en: ["cubic meter", "cubic meters"], de: ["Kubikmeter", "Kubikmeter"], gender: "m" },
  { symbol: "km", en: ["kilometer", "kilometers"], de: ["Kilometer", "Kilometer"], gender: "m" },
  { symbol: "cm", en: ["centimeter", "centimeters"], de: ["Zentimeter", "Zentimeter"], gender: "m" },
  { symbol: "mm", en: ["millimeter", "millimeters"], de: ["Millimeter", "Millimeter"], gender: "m" },
  { symbol: "m", en: ["meter", "meters"], de: ["Meter", "Meter"], gender: "m", spaced: true },
  { symbol: "kg", en: ["kilogram", "kilograms"], de: ["Kilogramm", "Kilogramm"], gender: "n" },
  { symbol: "mg", en: ["milligram", "milligrams"], de: ["Milligramm", "Milligramm"], gender: "n" },
  { symbol: "g", en: ["gram", "grams"], de: ["Gramm", "Gramm"], gender: "n", spaced: true },
  { symbol: "ml", en: ["milliliter", "milliliters"], de: ["Milliliter", "Milliliter"], gender: "m" },
  { symbol: "l", en: ["liter", "liters"], de: ["Liter", "Liter"], gender: "m", spaced: true },
  { symbol: "°C", en: ["degree Celsius", "degrees Celsius"], de: ["Grad Celsius", "Grad Celsius"], gender: "n" },
  { symbol: "°F", en: ["degree Fahrenheit", "degrees Fahrenheit"], de: ["Grad Fahrenheit", "Grad Fahrenheit"], gender: "n" },
  { symbol: "°", en: ["degree", "degrees"], de: ["Grad", "Grad"], gender: "n" },
  { symbol: "kWh", en: ["kilowatt hour", "kilowatt hours"], de: ["Kilowattstunde", "Kilowattstunden"], gender: "f" },
  { symbol: "MWh", en: ["megawatt hour", "megawatt hours"], de: ["Megawattstunde", "Megawattstunden"], gender: "f" },
  { symbol: "GWh", en: ["gigawatt hour", "gigawatt hours"], de: ["Gigawattstunde", "Gigawattstunden"], gender: "f" },
  { symbol: "kW", en: ["kilowatt", "kilowatts"], de: ["Kilowatt", "Kilowatt"], gender: "n" },
  { symbol: "MW", en: ["megawatt", "megawatts"], de: ["Megawatt", "Megawatt"], gender: "n" },
  { symbol: "GW", en: ["gigawatt", "gigawatts"], de: ["Gigawatt", "Gigawatt"], gender: "n" },
  { symbol: "KB", en: ["kilobyte", "kilobytes"], de: ["Kilobyte", "Kilobyte"], gender: "n" },
  { symbol: "MB", en: ["megabyte", "megabytes"], de: ["Megabyte", "Megabyte"], gender: "n" },
  { symbol: "GB", en: ["gigabyte", "gigabytes"], de: ["Gigabyte", "Gigabyte"], gender: "n" },
  { symbol: "TB", en: ["terabyte", "terabytes"], de: ["Terabyte", "Terabyte"], gender: "n" },
  { symbol: "min", en: ["minute", "minutes"], de: ["Minute", "Minuten"], gender: "f", spaced: true },
  { symbol: "%", en: ["percent", "percent"], de: ["Prozent", "Prozent"], gender: "n" },
  { symbol: "‰", en: ["per mille", "per mille"], de: ["Promille", "Promille"], gender: "n" },
];

const bySymbol = new Map(UNITS.map((u) => [u.symbol, u]));
const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

const pattern = perLanguage((key): RegExp => {
  const { integer, decimal } = numberNotation(key);
  const symbols = [...UNITS]
    .sort((a, b) => b.symbol.length - a.symbol.length)
    .map((u) => (u.spaced ? `\\s${escape(u.symbol)}` : `\\s?${escape(u.symbol)}`))
    .join("|");
  // Sign, integer with the language's thousands separator, decimals, unit.
  return new RegExp(`(?<![\\p{L}\\d.,])([-−+]?)(${integer})(?:${decimal}(\\d+))?(${symbols})(?![\\p{L}\\d²³])`, "gu");
});

// A unit with no number before it, after a word that takes one ("pro kWh", "per km", "Cent/kWh"):
// read in the singular. Single-letter symbols and "%" stay, being too ambiguous without a number.
// The words before are checked in the callback: a leading lookbehind would run at every position.
const bare = perLanguage((key) => {
  const symbols = UNITS.filter((u) => u.symbol.length > 1 && !u.spaced && /^\p{L}/u.test(u.symbol))
    .map((u) => u.symbol)
    .sort((a, b) => b.length - a.length)
    .map(escape)
    .join("|");
  const per = key === "de" ? "pro|je|in|Euro|Cent|Dollar" : "per|a|an|each|in|dollars?|cents?|euros?";
  return {
    re: new RegExp(`(/?)(${symbols})(?![\\p{L}\\d²³/])`, "gu"),
    afterWord: new RegExp(`(?:^|[\\s(])(?:${per})\\s$`),
  };
});

export function readMeasures(text: string, key: Key): string {
  const s = text.replace(pattern(key), (m, sign: string, int: string, frac: string | undefined, sym: string, off: number, whole: string) => {
    const unit = bySymbol.get(sym.trim());
    const digits = int.replace(/[.,]/g, "");
    if (!unit || digits.length > 15) return m;
    const singular = digits === "1" && !frac;
    const words = countWords(key, digits, frac, unit.gender, whole.slice(Math.max(0, off - 40), off));
    const prefix = sign === "+" ? "plus " : sign ? "minus " : "";
    return `${prefix}${words} ${unit[key][singular ? 0 : 1]}`;
  });
  const b = bare(key);
  return s.replace(b.re, (m, slash: string, sym: string, off: number, whole: string) => {
    const unit = bySymbol.get(sym);
    if (!unit) return m;
    const prev = whole.slice(Math.max(0, off - 12), off);
    if (slash) return /[\p{L}\d€$]\s?$/u.test(prev) ? ` ${key === "de" ? "pro" : "per"} ${unit[key][0]}` : m;
    return b.afterWord.test(prev) ? unit[key][0] : m;
  });
}
