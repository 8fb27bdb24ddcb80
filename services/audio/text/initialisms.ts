// German initialisms ("EU", "BASF", "DIHK", "BIP") are said letter by letter.
// German engines tend to read an all-capital word as a word, or with English
// letter names, so they become respelled German letter names ("Eh Uh").
// Acronyms that are said as words ("NATO", "DAX") are listed and left alone.
import { spellLetters } from "./abbreviations.js";

const SAID_AS_WORDS = new Set(
  "NATO UNO DAX MDAX SDAX FIFA UEFA NASA ESA UNESCO UNICEF OPEC AIDS COVID SARS ALDI LIDL IKEA EFTA NAFTA ASEAN KITA GAU PIN TAN HIV AKW ISIS BAFIN DIN ISO OSZE ESC GIGA LOL NIVEA EDEKA REWE HARIBO ADIDAS PUMA TUI DEKRA AUDI SAP".split(" "),
);

// Two to four capitals (five without a vowel), optionally with a plural or genitive "s".
// What stands before is checked in the callback, cheaper than a leading lookbehind.
const ALL_CAPS = /(\p{Lu}{2,5})(s?)(?![\p{L}\d])/gu;

export function spellInitialisms(text: string): string {
  return text.replace(ALL_CAPS, (m, caps: string, s: string, off: number, whole: string) => {
    if (off > 0 && /[\p{L}\d-]/u.test(whole[off - 1])) return m;
    if (SAID_AS_WORDS.has(caps)) return m;
    if (caps.length === 5 && /[AEIOUÄÖÜ]/.test(caps)) return m;
    return spellLetters(caps, "de") + s;
  });
}
