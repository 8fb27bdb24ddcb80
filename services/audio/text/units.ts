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

export function readMeasures(text: string, key: Key): string {
  return text.replace(pattern(key), (m, sign: string, int: string, frac: string | undefined, sym: string) => {
    const unit = bySymbol.get(sym.trim());
    const digits = int.replace(/[.,]/g, "");
    if (!unit || digits.length > 15) return m;
    const singular = digits === "1" && !frac;
    const words = countWords(key, digits, frac, unit.gender);
    const prefix = sign === "+" ? "plus " : sign ? "minus " : "";
    return `${prefix}${words} ${unit[key][singular ? 0 : 1]}`;
  });
}
