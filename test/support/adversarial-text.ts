// The pronunciation rules and text of issue 21's report: 500 rules of 47 × "a"
// then z0 … z499, against paragraphs of "a a a …", which made one regular
// expression of all the rules backtrack for seconds to minutes per paragraph.
import type { PronunciationRule } from "../../lib/pronunciations.js";

export const ADVERSARIAL_RULES: PronunciationRule[] = Array.from({ length: 500 }, (_, i) => ({ match: `${"a ".repeat(47)}z${i}`, say: "zed" }));

/** `chars` characters of "a a a …". */
export const repeated = (chars: number) => "a ".repeat(Math.ceil(chars / 2)).slice(0, chars).trim();
