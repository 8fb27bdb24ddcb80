// Article ids: a readable slug of the title plus a random suffix, so ids are
// URL-safe, recognisable in logs and still unguessable across projects.
import { randomInt } from "node:crypto";

const MAX_SLUG = 48;
const SUFFIX_LENGTH = 8;
const BASE36 = "0123456789abcdefghijklmnopqrstuvwxyz";

// Letters NFKD does not decompose into ASCII; German gets its usual spelling.
const SPECIAL: Record<string, string> = {
  ä: "ae", ö: "oe", ü: "ue", Ä: "Ae", Ö: "Oe", Ü: "Ue", ß: "ss", ẞ: "SS",
  æ: "ae", Æ: "AE", œ: "oe", Œ: "OE", ø: "o", Ø: "O", đ: "d", Đ: "D", ł: "l", Ł: "L", þ: "th", Þ: "Th",
};
const SPECIAL_RE = new RegExp(`[${Object.keys(SPECIAL).join("")}]`, "g");

export function slugify(title: string): string {
  const ascii = title
    .replace(SPECIAL_RE, (c) => SPECIAL[c])
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase();
  const slug = ascii
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+/, "")
    .slice(0, MAX_SLUG)
    .replace(/-+$/, "");
  return slug || "article";
}

export function randomSuffix(length = SUFFIX_LENGTH): string {
  let s = "";
  for (let i = 0; i < length; i++) s += BASE36[randomInt(36)];
  return s;
}

export const newArticleId = (title: string) => `${slugify(title)}-${randomSuffix()}`;
