// German initialisms ("EU", "BASF", "DIHK", "BIP") are said letter by letter.
// German engines tend to read an all-capital word as a word, or with English
// letter names, so they become respelled German letter names ("Eh Uh").
// Acronyms that are said as words ("NATO", "DAX") are listed and left alone.
import { spellLetters } from "./abbreviations.js";

const SAID_AS_WORDS = new Set(
  "NATO UNO WLAN DAX MDAX SDAX FIFA UEFA NASA ESA UNESCO UNICEF OPEC AIDS COVID SARS ALDI LIDL IKEA EFTA NAFTA ASEAN KITA GAU PIN TAN HIV AKW ISIS BAFIN DIN ISO OSZE ESC GIGA LOL NIVEA EDEKA REWE HARIBO ADIDAS PUMA TUI DEKRA AUDI SAP".split(" "),
);

// Two to four capitals (five without a vowel), optionally with a plural or genitive "s".
// Roman numerals the roman reader left alone ("Ludwig XIV") are not initialisms.
const ROMAN = /^(?=[MDCLXVI])M{0,3}(?:CM|CD|D?C{0,3})(?:XC|XL|L?X{0,3})(?:IX|IV|V?I{0,3})$/;
// Initialisms written with lower-case letters in them.
const MIXED_CASE = /(?<![\p{L}\d-])(?:AfD|GmbH|KfW)(?![\p{L}\d])/gu;

// What stands before is checked in the callback, cheaper than a leading lookbehind.
const ALL_CAPS = /(\p{Lu}{2,5})(s?)(?![\p{L}\d])/gu;

export function spellInitialisms(text: string): string {
  const mixed = text.replace(MIXED_CASE, (m: string) => spellLetters(m, "de"));
  return mixed.replace(ALL_CAPS, (m, caps: string, s: string, off: number, whole: string) => {
    if (off > 0 && /[\p{L}\d-]/u.test(whole[off - 1])) return m;
    if (SAID_AS_WORDS.has(caps) || ROMAN.test(caps)) return m;
    if (caps.length === 5 && /[AEIOUÄÖÜ]/.test(caps)) return m;
    return spellLetters(caps, "de") + s;
  });
}

/** English: "US" in capitals is the country; engines read it as the pronoun "us". */
export function spellEnglishInitialisms(text: string): string {
  return text.replace(/\bUS\b(?![-‑]?\p{Lu}{2})/gu, (m, off: number, whole: string) => (/\p{Lu}{2,}\s+$/u.test(whole.slice(Math.max(0, off - 12), off)) ? m : "U S"));
}
