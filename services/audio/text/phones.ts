// Telephone numbers and other digit strings that are read digit by digit:
// "+49 30 1234567", "(555) 123-4567", "555-123-4567", "030/1234567", "007".
import { digitWords, type Key } from "./words.js";

const PHONE = new RegExp(
  [
    // International: "+" and groups separated by spaces, dashes, dots or slashes; "(0)" allowed.
    String.raw`\+\d{1,3}(?:[ \-./]?(?:\(\d{1,4}\)|\d{1,6})){1,6}`,
    // North American: "1-800-555-0199", "(555) 123-4567" and "555-123-4567".
    String.raw`1[-.\s]\d{3}[-.]\d{3}[-.]\d{4}`,
    String.raw`\(\d{3}\)\s?\d{3}[-.\s]\d{4}`,
    String.raw`\d{3}-\d{3}-\d{4}`,
    // A trunk prefix ("030", "0800") and at least one more group.
    String.raw`0\d{2,5}(?:[ /\-]\d{2,}){1,4}`,
  ]
    .map((p) => `(?:${p})`)
    .join("|")
    .replace(/^/, String.raw`(?<![\p{L}\d+.,/-])(?:`)
    .concat(String.raw`)(?![\p{L}\d]|[.,]\d)`),
  "gu",
);

/** Lone digit strings with a leading zero are codes, never quantities. */
const LEADING_ZERO = /(?<![\p{L}\d.,:/-])0\d{2,}(?![\p{L}\d]|[.,]\d)/gu;

export function readPhoneNumbers(text: string, key: Key): string {
  return text
    .replace(PHONE, (m) => {
      const digits = m.replace(/\D/g, "");
      if (digits.length < 6 || digits.length > 15) return m;
      const groups = m.match(/\d+/g) ?? [];
      return `${m.startsWith("+") ? "plus " : ""}${groups.map((g) => digitWords(key, g)).join(", ")}`;
    })
    .replace(LEADING_ZERO, (m) => digitWords(key, m));
}
