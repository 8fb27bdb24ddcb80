// Number words for both languages, built on n2words. Everything here takes
// digit strings, so numbers beyond 2^53 never lose digits.
import * as en from "n2words/en-US";
import * as de from "n2words/de-DE";

export type Key = "en" | "de";

/** Builds a language's value (compiled patterns, mostly) on first use and keeps it. */
export function perLanguage<T>(build: (key: Key) => T): (key: Key) => T {
  const built = new Map<Key, T>();
  return (key) => {
    let v = built.get(key);
    if (v === undefined) {
      v = build(key);
      built.set(key, v);
    }
    return v;
  };
}

/**
 * How the language writes numbers, as regex sources: `integer` is a whole
 * number with or without thousands separators ("12,500" / "12.500"), `decimal`
 * the decimal separator.
 */
export function numberNotation(key: Key): { integer: string; decimal: string } {
  const group = key === "de" ? "\\." : ",";
  return { integer: `\\d{1,3}(?:${group}\\d{3})+|\\d+`, decimal: key === "de" ? "," : "\\." };
}

/** German grammatical gender of the noun a count stands before ("ein Euro", "eine Stunde"). */
export type Gender = "m" | "f" | "n";

/** Integers longer than this are left to the engine; n2words stops at the quadrillions. */
export const MAX_DIGITS = 15;

export function cardinal(key: Key, digits: string | number): string {
  return key === "de" ? de.toCardinal(digits) : en.toCardinal(digits);
}

/** Base ordinal: "twenty-first" / "einundzwanzigste" (German endings are added by germanOrdinal). */
export function ordinal(key: Key, n: number): string {
  return key === "de" ? de.toOrdinal(n) : en.toOrdinal(n);
}

/** "030" → "zero three zero": for phone numbers, codes and the part after a decimal point. */
export function digitWords(key: Key, digits: string): string {
  return [...digits].map((d) => cardinal(key, d)).join(" ");
}

/** "3.25" → "three point two five", "3,25" → "drei Komma zwei fünf". */
export function decimalWords(key: Key, int: string, frac: string): string {
  return `${cardinal(key, int)} ${key === "de" ? "Komma" : "point"} ${digitWords(key, frac)}`;
}

/**
 * A number as a count before a noun: German "eins" becomes "ein"/"eine"
 * there, and after a preposition it takes the case the preposition asks for
 * ("mit einer Stunde", "für einen Monat"); `before` is the text before it.
 */
export function countWords(key: Key, int: string, frac: string | undefined, gender: Gender = "m", before = ""): string {
  if (frac) return decimalWords(key, int, frac);
  const words = cardinal(key, int);
  if (key !== "de") return words;
  if (int === "1") return germanOne(gender, before);
  // "einhunderteins Euro" is said "einhundertein Euro".
  return words.endsWith("eins") ? words.slice(0, -1) : words;
}

// Prepositions right before a German numeral, by the case they govern. Two-way
// prepositions ("in", "vor") mostly locate in time or place before a count: dative.
const DATIVE_BEFORE = /(?:^|[\s(„"'])(?:mit|von|aus|bei|nach|seit|zu|vor|in|an|auf|unter|über|hinter|neben|zwischen|gegenüber|samt|nebst|binnen|ab)\s+$/i;
// Verbs whose object is the count ("kostet einen Euro", "dauerte einen Tag") ask for the accusative too.
const ACCUSATIVE_BEFORE = /(?:^|[\s(„"'])(?:für|durch|gegen|ohne|um|je|kostet|kosten|kostete|kosteten|zahlt|zahlte|zahlen|bekam|bekommt|erhielt|erhält|gewann|gewinnt|verlor|verliert|braucht|brauchte|dauert|dauerte|wartete|wartet|lief|läuft|fuhr|fährt)\s+$/i;
const GENITIVE_BEFORE = /(?:^|[\s(„"'])(?:während|wegen|trotz|innerhalb|außerhalb|statt|anstatt|mithilfe|aufgrund|angesichts|infolge)\s+$/i;

/** German "one" before a noun of `gender`, in the case the word before asks for. */
export function germanOne(gender: Gender, before: string): string {
  if (DATIVE_BEFORE.test(before)) return gender === "f" ? "einer" : "einem";
  if (GENITIVE_BEFORE.test(before)) return gender === "f" ? "einer" : "eines";
  if (ACCUSATIVE_BEFORE.test(before)) return gender === "f" ? "eine" : gender === "m" ? "einen" : "ein";
  return gender === "f" ? "eine" : "ein";
}

const MASCULINE_NOUN =
  /^(?:euro|dollar|cent|franken|rappen|yen|monat|tag|punkt|prozentpunkt|fall|mann|sieg|platz|schritt|satz|preis|meter|kilometer|zentimeter|millimeter|liter|milliliter|name|kunde|bürger|kollege|experte|zeuge|spieler|mitarbeiter|besucher|einwohner|abgeordneter|wagen|zug|bus|baum|stein|hund|ort|weg|tisch|stuhl|brief|anteil|betrag|vertrag|antrag|termin|versuch|wert|rang|stock|gast|arzt|sohn|vater|bruder|freund|lehrer|schüler|kandidat|student|patient|präsident|minister|kanzler|abend|morgen|winter|sommer|herbst|frühling)$|(?:ling|ismus|ant|ent|ist|eur|or|tag|platz|preis|vertrag|monat|punkt|euro|meter|liter)$/;
const FEMININE_NOUN = /(?:ung|heit|keit|schaft|ion|tät|ik|ie|ei|in|ur|e|frau|person|liga|nacht|stadt|hand|zeit|welt|art|bank|wahl|uhr|tür|milch|kraft|zahl|macht|angst)$/;

/** Grammatical gender of a German noun by its ending: a heuristic, right for the common nouns of news text. */
export function germanGender(noun: string): Gender {
  const n = noun.toLowerCase();
  if (MASCULINE_NOUN.test(n) && !/(?:ung|heit|keit|schaft|ion)$/.test(n)) return "m";
  if (FEMININE_NOUN.test(n)) return "f";
  return "n";
}

/** Years as people say them: "nineteen eighty-four", "twenty twenty-six", "neunzehnhundertvierundachtzig". */
export function yearWords(year: number, key: Key): string {
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

// German ordinals take the adjective ending their article and case ask for.
// We only see the words before the number, so the rule is a heuristic:
//  - after a dative/accusative form ("am", "im", "zum", "dem", "den", "des",
//    "einem", "einen", "einer"), a bare preposition ("ab", "bis", "seit", "für")
//    or a preposition plus article ("in der", "mit dem"): weak "-en"
//    ("am dritten Oktober", "in der zweiten Etage", "bis zweiundzwanzigsten November");
//  - after "der", "die", "das", "eine": "-e" ("der dritte Platz");
//  - after "ein", or with no article: strong ending by the gender of the next
//    noun: "-er" masculine (dates: "Montag, dritter Oktober"; "erster FC"),
//    "-es" neuter ("drittes Mal"), "-e" feminine or unknown ("zweite Liga").
// "am Montag, 5. Oktober" inflects like "am 5. Oktober".
const WEEKDAY = "(?:(?:Montag|Dienstag|Mittwoch|Donnerstag|Freitag|Samstag|Sonntag),?\\s+(?:den\\s+)?)?";
const WEAK_AFTER = new RegExp(`(?:^|[\\s(„"'])(?:am|im|vom|zum|zur|beim|dem|den|des|einem|einen|einer|diesem|diesen|ab|bis|seit|für|gegen|ohne|um)\\s+${WEEKDAY}$`, "i");
const PREP_ARTICLE = /(?:^|[\s(„"'])(?:in|an|auf|aus|bei|mit|nach|von|zu|vor|hinter|unter|über|neben|zwischen|seit|bis zu)\s+(?:der|dem|den)\s+$/i;
const WEAK_E_AFTER = /(?:^|[\s(„"'])(?:der|die|das|eine|diese|dieser|dieses)\s+$/i;
const INDEFINITE = /(?:^|[\s(„"'])(?:ein|kein)\s+$/i;

const MASCULINE = /^(?:januar|februar|märz|april|mai|juni|juli|august|september|oktober|november|dezember|fc|sc|vfb|vfl|platz|rang|stock|tag|monat|spieltag|weltkrieg|vorsitzender|versuch|schritt|teil|band|akt|advent|sonntag|preis|sieg|satz|lauf|durchgang|abschnitt|paragraph|paragraf|artikel)$|(?:platz|tag|versuch|preis|lauf)$/i;
const NEUTER = /^(?:mal|jahrhundert|jahrtausend|jahr|quartal|halbjahr|kapitel|spiel|rennen|semester|viertel|buch|gebot|programm|treffen)$|(?:jahr|spiel|rennen)$/i;

export function germanOrdinal(n: number, before: string, next = ""): string {
  const base = de.toOrdinal(n);
  if (WEAK_AFTER.test(before) || PREP_ARTICLE.test(before)) return `${base}n`;
  const noun = next.replace(/[^\p{L}]/gu, "");
  // "der" before a feminine noun is genitive or dative: "die Spieler der ersten Bundesliga".
  if (/(?:^|[\s(„"'])der\s+$/i.test(before) && !MASCULINE.test(noun) && germanGender(noun) === "f") return `${base}n`;
  if (WEAK_E_AFTER.test(before)) return base;
  if (MASCULINE.test(noun)) return `${base}r`;
  if (NEUTER.test(noun)) return `${base}s`;
  // "eine" was handled above, so an indefinite article here is "ein"/"kein": strong masculine.
  return INDEFINITE.test(before) ? `${base}r` : base;
}
