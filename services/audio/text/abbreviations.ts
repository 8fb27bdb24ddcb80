// Abbreviations that a speech engine would otherwise spell out or pause on.
// `final` marks those that may also close a sentence ("... and so on etc."):
// their period is kept when a capitalised word or the paragraph end follows.
import { langKey } from "./lang.js";

interface Abbrev {
  /** Spellings as written, spaces optional between the parts ("z. B." / "z.B."). */
  parts: string[];
  spoken: string;
  final?: boolean;
  /** Only expanded when a number follows ("No. 5", "Nr. 5", "Jan. 5"). */
  beforeNumber?: boolean;
  /** Only expanded after a day ("5. Jan. 2024"). */
  afterDay?: boolean;
  /** Only expanded before a name ("Gen. Smith", "St. Pauli"), since the spelling has other meanings. */
  beforeName?: boolean;
  /** Only expanded before a date ("Mo., 5. Okt."). */
  beforeDate?: boolean;
  /** Only expanded after a number ("12 pts.", "6 ft."). */
  afterNumber?: boolean;
}

const DE_WEEKDAYS: Array<[string, string]> = [["Mo", "Montag"], ["Di", "Dienstag"], ["Mi", "Mittwoch"], ["Do", "Donnerstag"], ["Fr", "Freitag"], ["Sa", "Samstag"], ["So", "Sonntag"]];
const EN_MONTHS: Array<[string, string]> = [["Jan", "January"], ["Feb", "February"], ["Mar", "March"], ["Apr", "April"], ["Aug", "August"], ["Sept", "September"], ["Sep", "September"], ["Oct", "October"], ["Nov", "November"], ["Dec", "December"]];
const DE_MONTHS: Array<[string, string]> = [["Jan", "Januar"], ["Feb", "Februar"], ["Apr", "April"], ["Aug", "August"], ["Sept", "September"], ["Sep", "September"], ["Okt", "Oktober"], ["Nov", "November"], ["Dez", "Dezember"]];

// Longer spellings come first: "Dr. med." before "Dr.".
const TABLE: Record<"en" | "de", Abbrev[]> = {
  en: [
    { parts: ["e", "g"], spoken: "for example" },
    { parts: ["i", "e"], spoken: "that is" },
    { parts: ["etc"], spoken: "et cetera", final: true },
    { parts: ["vs"], spoken: "versus" },
    { parts: ["approx"], spoken: "approximately" },
    { parts: ["Dr"], spoken: "Doctor" },
    { parts: ["Mr"], spoken: "Mister" },
    { parts: ["Mrs"], spoken: "Missus" },
    { parts: ["Ms"], spoken: "Miz" },
    { parts: ["Prof"], spoken: "Professor" },
    { parts: ["Jr"], spoken: "Junior", final: true },
    { parts: ["Sr"], spoken: "Senior", final: true },
    { parts: ["Gov"], beforeName: true, spoken: "Governor" },
    { parts: ["Sen"], beforeName: true, spoken: "Senator" },
    { parts: ["Rep"], beforeName: true, spoken: "Representative" },
    { parts: ["Gen"], beforeName: true, spoken: "General" },
    { parts: ["Capt"], beforeName: true, spoken: "Captain" },
    { parts: ["Lt"], beforeName: true, spoken: "Lieutenant" },
    { parts: ["Sgt"], beforeName: true, spoken: "Sergeant" },
    { parts: ["Fig"], spoken: "figure", beforeNumber: true },
    { parts: ["No"], spoken: "number", beforeNumber: true },
    { parts: ["Nos"], spoken: "numbers", beforeNumber: true },
    { parts: ["pp"], spoken: "pages", beforeNumber: true },
    { parts: ["p"], spoken: "page", beforeNumber: true },
    { parts: ["Mt"], beforeName: true, spoken: "Mount" },
    { parts: ["Ft"], beforeName: true, spoken: "Fort" },
    { parts: ["St"], beforeName: true, spoken: "Saint" },
    { parts: ["Ave"], spoken: "Avenue", final: true },
    { parts: ["Blvd"], spoken: "Boulevard", final: true },
    { parts: ["Ph", "D"], spoken: "P H D", final: true },
    { parts: ["Inc"], spoken: "Incorporated", final: true },
    { parts: ["Corp"], spoken: "Corporation", final: true },
    { parts: ["Ltd"], spoken: "Limited", final: true },
    { parts: ["Bros"], spoken: "Brothers", final: true },
    { parts: ["pts"], spoken: "points", afterNumber: true, final: true },
    { parts: ["hrs"], spoken: "hours", afterNumber: true, final: true },
    { parts: ["mins"], spoken: "minutes", afterNumber: true, final: true },
    { parts: ["lbs"], spoken: "pounds", afterNumber: true, final: true },
    { parts: ["oz"], spoken: "ounces", afterNumber: true, final: true },
    { parts: ["ft"], spoken: "feet", afterNumber: true, final: true },
    { parts: ["yds"], spoken: "yards", afterNumber: true, final: true },
    { parts: ["mi"], spoken: "miles", afterNumber: true, final: true },
    ...EN_MONTHS.map(([a, spoken]) => ({ parts: [a], spoken, beforeNumber: true })),
  ],
  de: [
    { parts: ["z", "B"], spoken: "zum Beispiel" },
    { parts: ["d", "h"], spoken: "das heißt" },
    { parts: ["u", "a"], spoken: "unter anderem" },
    { parts: ["o", "Ä"], spoken: "oder Ähnliches", final: true },
    { parts: ["u", "Ä"], spoken: "und Ähnliches", final: true },
    { parts: ["s", "o"], spoken: "siehe oben", final: true },
    { parts: ["s", "u"], spoken: "siehe unten", final: true },
    { parts: ["z", "T"], spoken: "zum Teil" },
    { parts: ["u", "U"], spoken: "unter Umständen" },
    { parts: ["i", "d", "R"], spoken: "in der Regel" },
    { parts: ["v", "a"], spoken: "vor allem" },
    { parts: ["v", "Chr"], spoken: "vor Christus", final: true },
    { parts: ["n", "Chr"], spoken: "nach Christus", final: true },
    { parts: ["usw"], spoken: "und so weiter", final: true },
    { parts: ["bzw"], spoken: "beziehungsweise" },
    { parts: ["ca"], spoken: "circa" },
    { parts: ["vgl"], spoken: "vergleiche" },
    { parts: ["ggf"], spoken: "gegebenenfalls" },
    { parts: ["evtl"], spoken: "eventuell" },
    { parts: ["inkl"], spoken: "inklusive" },
    { parts: ["zzgl"], spoken: "zuzüglich" },
    { parts: ["exkl"], spoken: "exklusive" },
    { parts: ["Mio"], spoken: "Millionen" },
    { parts: ["Mrd"], spoken: "Milliarden" },
    { parts: ["Tsd"], spoken: "Tausend" },
    { parts: ["Dr", "med", "dent"], spoken: "Doktor der Zahnmedizin" },
    { parts: ["Dr", "med"], spoken: "Doktor der Medizin" },
    { parts: ["Dr", "rer", "nat"], spoken: "Doktor der Naturwissenschaften" },
    { parts: ["Dr", "phil"], spoken: "Doktor der Philosophie" },
    { parts: ["Dr", "jur"], spoken: "Doktor der Rechte" },
    { parts: ["Dr"], spoken: "Doktor" },
    { parts: ["Prof"], spoken: "Professor" },
    { parts: ["Hr"], spoken: "Herr" },
    { parts: ["Str"], spoken: "Straße" },
    { parts: ["Tel"], spoken: "Telefon" },
    { parts: ["St"], spoken: "Sankt", beforeName: true },
    { parts: ["Jh"], spoken: "Jahrhundert", final: true },
    { parts: ["Nr"], spoken: "Nummer", beforeNumber: true },
    { parts: ["Abs"], spoken: "Absatz", beforeNumber: true },
    { parts: ["Art"], spoken: "Artikel", beforeNumber: true },
    { parts: ["Bd"], spoken: "Band", beforeNumber: true },
    { parts: ["S"], spoken: "Seite", beforeNumber: true },
    { parts: ["Std"], spoken: "Stunden" },
    { parts: ["Min"], spoken: "Minuten" },
    ...DE_MONTHS.map(([a, spoken]) => ({ parts: [a], spoken, afterDay: true })),
    ...DE_WEEKDAYS.map(([a, spoken]) => ({ parts: [a], spoken, beforeDate: true })),
  ],
};

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

interface Compiled {
  /** One pass over the text for all abbreviations of a language. */
  re: RegExp;
  /** Abbreviations only read after a number. */
  afterNumber?: RegExp;
  /** By spelling without spaces: "z.B." */
  byForm: Map<string, Abbrev>;
}

const compiled = new Map<string, Compiled>();

function rules(lang: string): Compiled {
  const key = langKey(lang);
  let c = compiled.get(key);
  if (!c) {
    // Longest spellings first, so "Dr. med." wins over "Dr.".
    const list = [...TABLE[key]].sort((x, y) => y.parts.join("").length - x.parts.join("").length);
    const alternatives = list
      .filter((a) => !a.afterNumber)
      .map((a) => {
        const body = a.parts.map((p) => `${escape(p)}\\.`).join("\\s?");
        const tail = a.beforeNumber ? "(?=\\s*\\d)" : a.beforeName ? "(?=\\s*\\p{Lu})" : a.beforeDate ? "(?=,?\\s*\\d{1,2}\\.)" : "";
        const head = a.afterDay ? "(?<=\\d\\.\\s?)" : "";
        return `${head}${body}${tail}`;
      });
    // Not preceded by a letter, so "Zoo." never matches "o."; \b fails on "Ä".
    const re = new RegExp(`(?<![\\p{L}\\p{N}])(?:${alternatives.join("|")})`, "gu");
    // Units after a number ("12 pts.") in a pass of their own: a lookbehind for the digit among
    // the alternatives above would slow the whole pattern down tenfold.
    const units = list.filter((a) => a.afterNumber).map((a) => escape(a.parts[0]));
    const afterNumber = units.length ? new RegExp(`(?<=\\s)(?:${units.join("|")})\\.`, "g") : undefined;
    c = { re, afterNumber, byForm: new Map(list.map((a) => [`${a.parts.join(".")}.`, a])) };
    compiled.set(key, c);
  }
  return c;
}

/**
 * Capitalised words that usually open a sentence. After a period that could
 * also end an abbreviation ("U.S.", "Ph.D.", an initial), one of these says the
 * sentence ended; any other capitalised word is more likely a name ("the U.S.
 * Senate").
 */
export const SENTENCE_STARTERS: Record<"en" | "de", ReadonlySet<string>> = {
  en: new Set(
    "The A An It Its He She They We I You But And Or So Yet In On At This That These Those There Here His Her Their Our My Your What When Where Why How Who Which Some Many Most After Before Since While As If Now Then Still Meanwhile However Also For With By From Last Next Both All No Not Such Officials Critics Experts Analysts Today Yesterday Tomorrow".split(" "),
  ),
  de: new Set(
    "Der Die Das Den Dem Des Ein Eine Einen Einem Einer Er Sie Es Wir Ich Ihr Man Aber Und Oder Doch Denn In Im Am An Auf Bei Mit Nach Von Vor Zu Zum Zur Dies Diese Dieser Dieses Dort Hier Sein Seine Ihre Unser Was Wann Wo Warum Wie Wer Welche Einige Viele Nach Seit Während Als Wenn Nun Dann Noch Trotzdem Jedoch Auch Für Durch Zuletzt Beide Alle Kein Keine Nicht Heute Gestern Morgen".split(" "),
  ),
};

/** True when `after` (the text following a period) starts like a new sentence: nothing, or a sentence opener. */
export function startsNewSentence(after: string, key: "en" | "de"): boolean {
  if (!/\S/.test(after)) return true;
  const word = /^\s+["'„“”’(]*(\p{Lu}\p{L}*)/u.exec(after)?.[1];
  return word !== undefined && SENTENCE_STARTERS[key].has(word);
}

const GERMAN_LETTERS: Record<string, string> = {
  A: "Ah", B: "Beh", C: "Zeh", D: "Deh", E: "Eh", F: "Eff", G: "Geh", H: "Hah", I: "Ih", J: "Jott", K: "Kah", L: "Ell", M: "Emm",
  N: "Enn", O: "Oh", P: "Peh", Q: "Kuh", R: "Err", S: "Ess", T: "Teh", U: "Uh", V: "Fau", W: "Weh", X: "Ix", Y: "Üpsilon", Z: "Zett",
  Ä: "Äh", Ö: "Öh", Ü: "Üh",
};

/**
 * Letters read one by one: German gets its letter names respelled ("Beh Ih
 * Peh"), which every engine reads alike; English keeps the capitals, which
 * engines read as letter names.
 */
export function spellLetters(letters: string, key: "en" | "de"): string {
  const chars = [...letters.replace(/[^\p{L}\d]/gu, "")];
  return chars.map((c) => (key === "de" ? (GERMAN_LETTERS[c.toUpperCase()] ?? c) : c.toUpperCase())).join(" ");
}

// "U.S.", "U.K.", "D.C.", "J.R.R.": letters with periods and nothing between them.
// After a number "A.M." is the clock's, left to the time reader.
// (What may stand before it is checked in the callback, which is cheaper than a leading lookbehind.)
const DOTTED_INITIALISM = /(?:\p{Lu}\.){2,}(?![\p{L}\d])/gu;
// "Main St.", "Elm Rd.": after a capitalised word it is the street; before a name ("St. Louis") it is Saint.
// (The lookbehind comes after the abbreviation so it is only tried where one stands.)
const EN_STREET = /(St|Rd|Ln|Dr)\.(?<=(?:^|[\s(])\p{Lu}[\p{L}'’-]*\s(?:St|Rd|Ln|Dr)\.)/gu;
const STREET_WORDS: Record<string, string> = { St: "Street", Rd: "Road", Ln: "Lane", Dr: "Drive" };

/** Keeps a period that ends the sentence; drops one that only marked the abbreviation. */
function withSentenceEnd(spoken: string, whole: string, end: number, key: "en" | "de"): string {
  return startsNewSentence(whole.slice(end, end + 24), key) ? `${spoken}.` : spoken;
}

/** Expands the language's common abbreviations in one paragraph. */
export function expandAbbreviations(text: string, lang: string): string {
  const key = langKey(lang);
  // "Hauptstr. 5": the abbreviation is glued to the street name.
  let glued = key === "de" ? text.replace(/(\p{Ll})str\.(?=\s*(?:\d|[,;)]|$))/gu, "$1straße") : text;
  if (key === "en") {
    glued = glued.replace(EN_STREET, (m, abbr: string, off: number, whole: string) => {
      const next = whole.slice(off + m.length, off + m.length + 24);
      // "Dr." before a name is the doctor; only a street before a new sentence, punctuation or a lowercase word.
      if (abbr === "Dr" && /^\s+\p{Lu}/u.test(next) && !startsNewSentence(next, key)) return m;
      return withSentenceEnd(STREET_WORDS[abbr], whole, off + m.length, key);
    });
  }
  glued = glued.replace(DOTTED_INITIALISM, (m: string, off: number, whole: string) => {
    // Part of a longer token ("XU.S."), or "A.M." after a clock time.
    const prev = whole.slice(Math.max(0, off - 2), off);
    if (/[\p{L}\d.]$/u.test(prev) || /\d\s$/.test(prev)) return m;
    return withSentenceEnd(spellLetters(m, key), whole, off + m.length, key);
  });
  const { re, afterNumber, byForm } = rules(lang);
  const expand = (m: string, offset: number, whole: string) => {
    const a = byForm.get(m.replace(/\s+/g, ""));
    if (!a) return m;
    if (a.afterNumber && !/\d\s$/.test(whole.slice(Math.max(0, offset - 2), offset))) return m;
    if (!a.final) return a.spoken;
    const end = offset + m.length;
    // A bounded look ahead keeps long paragraphs linear.
    const endsSentence = (whole.length - end < 8 && !/\S/.test(whole.slice(end))) || /^\s+["'”’)]*\s*\p{Lu}/u.test(whole.slice(end, end + 8));
    return endsSentence ? `${a.spoken}.` : a.spoken;
  };
  const expanded = glued.replace(re, expand);
  return afterNumber ? expanded.replace(afterNumber, expand) : expanded;
}

/**
 * Words after which a period does not end a sentence, for the splitter. They
 * matter for raw text, which keeps its abbreviations.
 */
export const NON_FINAL: Record<"en" | "de", string[]> = {
  en: ["Dr", "Mr", "Mrs", "Ms", "Prof", "St", "Mt", "Ft", "Ave", "Blvd", "pts", "Jr", "Sr", "Gen", "Sen", "Rep", "Gov", "Capt", "Lt", "Col", "Sgt", "Rev", "Fig", "No", "Nos", "pp", "vs", "approx", "cf", "ca", "e.g", "i.e", "Jan", "Feb", "Mar", "Apr", "Aug", "Sep", "Sept", "Oct", "Nov", "Dec"],
  de: ["Dr", "med", "dent", "rer", "nat", "phil", "jur", "Prof", "Nr", "ca", "bzw", "vgl", "ggf", "evtl", "inkl", "zzgl", "exkl", "Mio", "Mrd", "Tsd", "Hr", "Fr", "St", "Str", "Tel", "Abs", "Art", "Bd", "Jh", "S", "Jan", "Feb", "Apr", "Aug", "Sep", "Sept", "Okt", "Nov", "Dez", "z. B", "z.B", "d. h", "d.h", "u. a", "u.a", "s. o", "z. T", "u. U", "i. d. R", "v. a", "v. Chr", "n. Chr"],
};
