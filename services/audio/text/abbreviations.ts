// Abbreviations that a speech engine would otherwise spell out or pause on.
// `final` marks those that may also close a sentence ("... and so on etc."):
// their period is kept when a capitalised word or the paragraph end follows.
import { langKey } from "./lang.js";

interface Abbrev {
  /** Spellings as written, spaces optional between the parts ("z. B." / "z.B."). */
  parts: string[];
  spoken: string;
  final?: boolean;
  /** Only expanded when a number follows ("No. 5", "Nr. 5"). */
  beforeNumber?: boolean;
}

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
    { parts: ["Prof"], spoken: "Professor" },
    { parts: ["No"], spoken: "number", beforeNumber: true },
  ],
  de: [
    { parts: ["z", "B"], spoken: "zum Beispiel" },
    { parts: ["d", "h"], spoken: "das heißt" },
    { parts: ["u", "a"], spoken: "unter anderem" },
    { parts: ["o", "Ä"], spoken: "oder Ähnliches", final: true },
    { parts: ["usw"], spoken: "und so weiter", final: true },
    { parts: ["bzw"], spoken: "beziehungsweise" },
    { parts: ["ca"], spoken: "circa" },
    { parts: ["vgl"], spoken: "vergleiche" },
    { parts: ["ggf"], spoken: "gegebenenfalls" },
    { parts: ["evtl"], spoken: "eventuell" },
    { parts: ["inkl"], spoken: "inklusive" },
    { parts: ["Mio"], spoken: "Millionen" },
    { parts: ["Mrd"], spoken: "Milliarden" },
    { parts: ["Dr"], spoken: "Doktor" },
    { parts: ["Prof"], spoken: "Professor" },
    { parts: ["Nr"], spoken: "Nummer", beforeNumber: true },
  ],
};

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

interface Compiled {
  re: RegExp;
  a: Abbrev;
}

const compiled = new Map<string, Compiled[]>();

function rules(lang: string): Compiled[] {
  const key = langKey(lang);
  let list = compiled.get(key);
  if (!list) {
    list = TABLE[key].map((a) => {
      const body = a.parts.map((p) => `${escape(p)}\\.`).join("\\s?");
      const tail = a.beforeNumber ? "(?=\\s*\\d)" : "";
      // Not preceded by a letter, so "Zoo." never matches "o."; \b fails on "Ä".
      return { a, re: new RegExp(`(?<![\\p{L}\\p{N}])${body}${tail}`, "gu") };
    });
    compiled.set(key, list);
  }
  return list;
}

/** Expands the language's common abbreviations in one paragraph. */
export function expandAbbreviations(text: string, lang: string): string {
  let out = text;
  for (const { re, a } of rules(lang)) {
    out = out.replace(re, (_m, offset: number, whole: string) => {
      if (!a.final) return a.spoken;
      const rest = whole.slice(offset + _m.length);
      const endsSentence = /^\s*$/.test(rest) || /^\s+["'”’)]*\s*\p{Lu}/u.test(rest);
      return endsSentence ? `${a.spoken}.` : a.spoken;
    });
  }
  return out;
}

/**
 * Words after which a period does not end a sentence, for the splitter. They
 * matter for raw text, which keeps its abbreviations.
 */
export const NON_FINAL: Record<"en" | "de", string[]> = {
  en: ["Dr", "Mr", "Mrs", "Ms", "Prof", "St", "Mt", "Jr", "Sr", "Gen", "Sen", "Rep", "Gov", "Capt", "Lt", "Col", "Sgt", "Rev", "Fig", "No", "vs", "approx", "cf", "ca", "e.g", "i.e"],
  de: ["Dr", "Prof", "Nr", "ca", "bzw", "vgl", "ggf", "evtl", "inkl", "Mio", "Mrd", "Hr", "Fr", "St", "Abs", "Art", "Bd", "Jh", "S", "z. B", "z.B", "d. h", "d.h", "u. a", "u.a", "s. o", "z. T"],
};
