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
    const alternatives = list.map((a) => {
      const body = a.parts.map((p) => `${escape(p)}\\.`).join("\\s?");
      const tail = a.beforeNumber ? "(?=\\s*\\d)" : a.beforeName ? "(?=\\s*\\p{Lu})" : a.beforeDate ? "(?=,?\\s*\\d{1,2}\\.)" : "";
      const head = a.afterDay ? "(?<=\\d\\.\\s?)" : "";
      return `${head}${body}${tail}`;
    });
    // Not preceded by a letter, so "Zoo." never matches "o."; \b fails on "Ä".
    const re = new RegExp(`(?<![\\p{L}\\p{N}])(?:${alternatives.join("|")})`, "gu");
    c = { re, byForm: new Map(list.map((a) => [`${a.parts.join(".")}.`, a])) };
    compiled.set(key, c);
  }
  return c;
}

/** Expands the language's common abbreviations in one paragraph. */
export function expandAbbreviations(text: string, lang: string): string {
  // "Hauptstr. 5": the abbreviation is glued to the street name.
  const glued = langKey(lang) === "de" ? text.replace(/(\p{Ll})str\.(?=\s*(?:\d|[,;)]|$))/gu, "$1straße") : text;
  const { re, byForm } = rules(lang);
  return glued.replace(re, (m, offset: number, whole: string) => {
    const a = byForm.get(m.replace(/\s+/g, ""));
    if (!a) return m;
    if (!a.final) return a.spoken;
    const end = offset + m.length;
    // A bounded look ahead keeps long paragraphs linear.
    const endsSentence = (whole.length - end < 8 && !/\S/.test(whole.slice(end))) || /^\s+["'”’)]*\s*\p{Lu}/u.test(whole.slice(end, end + 8));
    return endsSentence ? `${a.spoken}.` : a.spoken;
  });
}

/**
 * Words after which a period does not end a sentence, for the splitter. They
 * matter for raw text, which keeps its abbreviations.
 */
export const NON_FINAL: Record<"en" | "de", string[]> = {
  en: ["Dr", "Mr", "Mrs", "Ms", "Prof", "St", "Mt", "Jr", "Sr", "Gen", "Sen", "Rep", "Gov", "Capt", "Lt", "Col", "Sgt", "Rev", "Fig", "No", "Nos", "pp", "vs", "approx", "cf", "ca", "e.g", "i.e", "Jan", "Feb", "Mar", "Apr", "Aug", "Sep", "Sept", "Oct", "Nov", "Dec"],
  de: ["Dr", "med", "dent", "rer", "nat", "phil", "jur", "Prof", "Nr", "ca", "bzw", "vgl", "ggf", "evtl", "inkl", "zzgl", "exkl", "Mio", "Mrd", "Tsd", "Hr", "Fr", "St", "Str", "Tel", "Abs", "Art", "Bd", "Jh", "S", "Jan", "Feb", "Apr", "Aug", "Sep", "Sept", "Okt", "Nov", "Dez", "z. B", "z.B", "d. h", "d.h", "u. a", "u.a", "s. o", "z. T", "u. U", "i. d. R", "v. a", "v. Chr", "n. Chr"],
};
