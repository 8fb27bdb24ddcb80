// Numbers joined by a slash: fractions ("1/3", "3/4"), seasons and fiscal
// years ("2023/24"), and names said as two numbers ("9/11", "24/7", "50/50").
// Dates with a year ("11/22/2026") were read before this runs.
import { cardinal, yearWords, type Key } from "./words.js";

// Denominators people say as a fraction; "5/16" would be "five sixteenths" but few articles write that.
const EN_DENOMINATORS: Record<number, [one: string, many: string]> = {
  2: ["half", "halves"], 3: ["third", "thirds"], 4: ["quarter", "quarters"], 5: ["fifth", "fifths"], 6: ["sixth", "sixths"],
  7: ["seventh", "sevenths"], 8: ["eighth", "eighths"], 9: ["ninth", "ninths"], 10: ["tenth", "tenths"], 100: ["hundredth", "hundredths"],
};
const DE_DENOMINATORS: Record<number, string> = {
  3: "Drittel", 4: "Viertel", 5: "Fünftel", 6: "Sechstel", 7: "Siebtel", 8: "Achtel", 9: "Neuntel", 10: "Zehntel", 100: "Hundertstel",
};

const SLASHED = /(?<![\p{L}\d.,/:-])(\d{1,4})\/(\d{1,4})(?![\p{L}\d]|[.,/]\d)/gu;

function fraction(key: Key, a: number, b: number): string | undefined {
  if (a < 1 || a >= b) return undefined;
  if (key === "en") {
    const names = EN_DENOMINATORS[b];
    if (!names) return undefined;
    return `${a === 1 ? "one" : cardinal(key, a)} ${a === 1 ? names[0] : names[1]}`;
  }
  if (b === 2) return a === 1 ? "ein halb" : undefined;
  const name = DE_DENOMINATORS[b];
  if (!name) return undefined;
  return `${a === 1 ? "ein" : cardinal(key, a)} ${name}`;
}

export function readSlashedNumbers(text: string, key: Key): string {
  return text.replace(SLASHED, (m, x: string, y: string) => {
    const a = Number(x), b = Number(y);
    // "2023/24", "2023/2024": a season or fiscal year, both years said in full.
    if (x.length === 4 && a >= 1100 && a < 2100 && (y.length === 2 ? b === (a + 1) % 100 : b === a + 1)) {
      const second = y.length === 2 ? cardinal(key, y.startsWith("0") ? y.slice(1) : y) : yearWords(b, key);
      return `${yearWords(a, key)} ${second}`;
    }
    const asFraction = x.length <= 2 && y.length <= 3 ? fraction(key, a, b) : undefined;
    if (asFraction) return asFraction;
    // Anything else of one or two digits each is said as two numbers: "nine eleven", "twenty-four seven".
    if (x.length <= 2 && y.length <= 2) return `${cardinal(key, a)} ${cardinal(key, b)}`;
    return m;
  });
}
