import type { Lang } from "../../../lib/voices.js";

export type { Lang };

/** Everything text preparation knows about a language; "en-US" is the fallback. */
export function langKey(lang: string): "en" | "de" {
  return lang.toLowerCase().startsWith("de") ? "de" : "en";
}

export const MONTHS = {
  en: ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"],
  de: ["Januar", "Februar", "März", "April", "Mai", "Juni", "Juli", "August", "September", "Oktober", "November", "Dezember"],
} as const;
