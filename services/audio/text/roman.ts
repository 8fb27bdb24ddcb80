// Roman numerals, only where the context makes them unmistakable: after a
// ruler's title and name ("King Charles III", "Papst Leo XIV.") they are
// ordinals; after words that number parts ("Chapter IV", "Kapitel IV",
// "World War II") they are cardinals. A lone "I" or "XL" elsewhere is a word.
import { cardinal, ordinal, perLanguage, type Key } from "./words.js";

const ROMAN = "(?=[MDCLXVI])M{0,3}(?:CM|CD|D?C{0,3})(?:XC|XL|L?X{0,3})(?:IX|IV|V?I{0,3})";
const VALUES: Record<string, number> = { M: 1000, D: 500, C: 100, L: 50, X: 10, V: 5, I: 1 };

function romanValue(r: string): number {
  let total = 0;
  for (let i = 0; i < r.length; i++) {
    const v = VALUES[r[i]], next = VALUES[r[i + 1]] ?? 0;
    total += v < next ? -v : v;
  }
  return total;
}

const TITLES = {
  en: "King|Queen|Pope|Emperor|Empress|Tsar|Czar|Tsarina|Prince|Princess|Duke|Duchess|Sultan|Pharaoh",
  de: "König|Königin|Kaiser|Kaiserin|Papst|Zar|Zarin|Prinz|Prinzessin|Herzog|Herzogin|Fürst|Fürstin|Sultan|Pharao",
};
const PARTS = {
  en: "Chapter|Part|Volume|Act|Phase|Book|Title|Article|Super Bowl|World War|Vatican",
  de: "Kapitel|Teil|Band|Akt|Phase|Buch|Titel|Artikel|Vatikanum",
};

const rules = perLanguage((key) => ({
  // Title, one or two capitalised names, the numeral; German marks it with a period.
  ruler: new RegExp(`\\b((?:${TITLES[key]})(?:\\s+\\p{Lu}\\p{Ll}+){1,2}\\s+)(${ROMAN})(\\.?)(?![\\p{L}\\d])`, "gu"),
  part: new RegExp(`\\b((?:${PARTS[key]})\\s+)(${ROMAN})(?![\\p{L}\\d]|\\.\\p{L})`, "gu"),
}));

export function readRomanNumerals(text: string, key: Key): string {
  const r = rules(key);
  return text
    .replace(r.ruler, (_m, pre: string, roman: string, dot: string, off: number, whole: string) => {
      const n = romanValue(roman);
      if (key === "en") return `${pre}the ${capitalise(ordinal(key, n))}${dot}`;
      // "Karl III. besuchte": the period only marks the ordinal, unless a new sentence follows.
      const end = off + _m.length;
      const keepDot = dot && (end >= whole.length || /^\s+["„”)]*\p{Lu}/u.test(whole.slice(end, end + 4)));
      return `${pre}der ${capitalise(ordinal(key, n))}${keepDot ? "." : ""}`;
    })
    .replace(r.part, (_m, pre: string, roman: string) => `${pre}${cardinal(key, romanValue(roman))}`);
}

const capitalise = (w: string) => w.charAt(0).toUpperCase() + w.slice(1);
