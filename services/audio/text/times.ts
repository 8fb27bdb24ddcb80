// Clock times: "14:30", "2:30 pm", "5 p.m.", "14.30 Uhr", "9 Uhr".
// English listeners expect the twelve-hour clock, so afternoon times written
// on the 24-hour clock are read with "p m". The suffix is spelled out as the
// letter names ("ay em", "pee em"): engines read a lone "A" as the article.
import { cardinal, type Key } from "./words.js";

const AM = "ay em";
const PM = "pee em";

function englishClock(h: number, m: number, suffix = ""): string {
  const tail = suffix ? ` ${suffix}` : "";
  if (m === 0) return suffix ? `${cardinal("en", h)}${tail}` : `${cardinal("en", h)} o'clock`;
  return `${cardinal("en", h)} ${m < 10 ? `oh ${cardinal("en", m)}` : cardinal("en", m)}${tail}`;
}

function english24(h: number, m: number): string {
  if (h === 0) return englishClock(12, m, AM);
  if (h <= 12) return englishClock(h, m);
  return englishClock(h - 12, m, PM);
}

/** "ein Uhr", not "eins Uhr"; minutes follow "Uhr". */
function germanClock(h: number, m: number): string {
  const hour = h === 1 ? "ein" : cardinal("de", h);
  return `${hour} Uhr${m ? ` ${cardinal("de", m)}` : ""}`;
}

const EN_MERIDIEM = /(?<![\d:.,])(1[0-2]|0?[1-9])(?::([0-5]\d))?\s?(?:([AaPp])\.\s?[Mm]\.|([AaPp])[Mm](?![\p{L}\d]))/gu;
const CLOCK = /(?<![\d:.,])([01]?\d|2[0-3]):([0-5]\d)(?![\d:]|[.,]\d)(?:\s*Uhr\b)?/g;
const DE_DOTTED_UHR = /(?<![\d:.,])([01]?\d|2[0-4])\.([0-5]\d)\s*Uhr\b/g;
const DE_HOUR_UHR = /(?<![\d:.,])([01]?\d|2[0-4])\s*Uhr\b/g;

export function readTimes(text: string, key: Key): string {
  let s = text;
  if (key === "en") {
    s = s.replace(EN_MERIDIEM, (_m, h: string, mi: string | undefined, dotted: string | undefined, plain: string | undefined, off: number, whole: string) => {
      const suffix = (dotted ?? plain ?? "a").toLowerCase() === "p" ? PM : AM;
      const words = englishClock(Number(h), mi ? Number(mi) : 0, suffix);
      // "p.m." may also close the sentence; its period must survive.
      const rest = whole.slice(off + _m.length, off + _m.length + 3);
      return dotted && (rest === "" || /^\s+\p{Lu}/u.test(rest)) ? `${words}.` : words;
    });
    return s.replace(CLOCK, (_m, h: string, mi: string) => english24(Number(h), Number(mi)));
  }
  s = s.replace(DE_DOTTED_UHR, (_m, h: string, mi: string) => germanClock(Number(h), Number(mi)));
  s = s.replace(CLOCK, (_m, h: string, mi: string) => germanClock(Number(h), Number(mi)));
  return s.replace(DE_HOUR_UHR, (_m, h: string) => germanClock(Number(h), 0));
}
