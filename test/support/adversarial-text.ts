// The pronunciation rules and text of issue 21's report: 500 rules of 47 × "a"
// then z0 … z499, against paragraphs of "a a a …", which made one regular
// expression of all the rules backtrack for seconds to minutes per paragraph.
import type { PronunciationRule } from "../../lib/pronunciations.js";

export const ADVERSARIAL_RULES: PronunciationRule[] = Array.from({ length: 500 }, (_, i) => ({ match: `${"a ".repeat(47)}z${i}`, say: "zed" }));

/** `chars` characters of "a a a …". */
export const repeated = (chars: number) => "a ".repeat(Math.ceil(chars / 2)).slice(0, chars).trim();

/**
 * A text whose preparation takes long by any deadline's measure, within the API's limits: 999,997
 * characters of one-word paragraphs ("a", blank line, "a" …), 333,333 of them, each split,
 * normalised and matched on its own: about 3 s on one thread here, on Node.js 20 and 24, thirty
 * times the shortest deadline AUDIO_TEXT_TIMEOUT_MS allows. The deadline's tests need it: "a a a …"
 * with the adversarial rules is prepared in 0.1–0.3 s since matching became linear, and a faster
 * machine finished it inside a 200 ms deadline.
 */
export const SLOW_TO_PREPARE = Array(333_333).fill("a").join("\n\n");
