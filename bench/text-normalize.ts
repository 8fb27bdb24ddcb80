// How long speech normalisation takes for a dense 100,000-character article
// (a number, date, amount or URL about every 15 characters), per language,
// against the time to merely split the same text into sentences.
// Also what pronunciation matching costs with 500 rules, ordinary ones and
// the adversarial ones of issue 21 (47 × "a", then zN) against "a a a …".
// Run: npx tsx bench/text-normalize.ts
import type { PronunciationRule } from "../lib/pronunciations.js";
import { prepareText, splitSentences } from "../services/audio/text/index.js";
import { markPronunciations } from "../services/audio/text/pronounce.js";

const SAMPLES: Record<string, string> = {
  "en-US":
    "On November 22, 2026 at 2:30 pm, Dr. Smith paid $3.50 for 1,250 items (12%) weighing 3.5 kg each; see https://www.example.com/x?y=1 or call +1 555 123 4567. The 21st meeting since 1999 ran 10–20 minutes, e.g. in the 1990s. ",
  "de-DE":
    "Am 22. November 2026 um 14.30 Uhr zahlte Dr. med. Müller 3,50 € für 1.250 Artikel (12 %) mit je 3,5 kg, z. B. unter www.beispiel.de oder +49 30 1234567. Der 2. Platz ging an die 3. Liga, ca. 10–20 Minuten. ",
};

function best(runs: number, fn: () => void): number {
  let min = Infinity;
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    fn();
    min = Math.min(min, performance.now() - t);
  }
  return min;
}

export function benchNormalize(): Array<{ lang: string; normalizeMs: number; splitMs: number; ratio: number }> {
  return Object.entries(SAMPLES).map(([lang, sentence]) => {
    let text = "";
    while (text.length < 100_000) text += sentence + (text.length % 1500 < sentence.length ? "\n\n" : "");
    text = text.slice(0, 100_000);
    const normalizeMs = best(5, () => prepareText({ title: "T", text, lang }));
    const splitMs = best(5, () => splitSentences(text, lang));
    return { lang, normalizeMs, splitMs, ratio: normalizeMs / splitMs };
  });
}

const ADVERSARIAL: PronunciationRule[] = Array.from({ length: 500 }, (_, i) => ({ match: `${"a ".repeat(47)}z${i}`, say: "zed" }));
const ORDINARY: PronunciationRule[] = Array.from({ length: 500 }, (_, i) => ({ match: `Name${i} Surname${i}`, say: `Nay-mee ${i}` }));

/** Marking time per paragraph size, ms (fastest of 5). */
export function benchRules(): Array<{ rules: string; chars: number; ms: number }> {
  const out: Array<{ rules: string; chars: number; ms: number }> = [];
  for (const chars of [1_000, 10_000, 1_000_000]) {
    const repeated = "a ".repeat(chars / 2).trim();
    const prose = SAMPLES["en-US"].repeat(Math.ceil(chars / SAMPLES["en-US"].length)).slice(0, chars);
    out.push({ rules: "adversarial", chars, ms: best(5, () => markPronunciations(repeated, ADVERSARIAL, "en-US")) });
    out.push({ rules: "ordinary", chars, ms: best(5, () => markPronunciations(prose, ORDINARY, "en-US")) });
  }
  return out;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const r of benchNormalize()) {
    console.log(`${r.lang}: normalise 100,000 chars ${r.normalizeMs.toFixed(1)} ms (target < 100 ms); sentence split alone ${r.splitMs.toFixed(1)} ms; ratio ${r.ratio.toFixed(2)}x`);
  }
  for (const r of benchRules()) console.log(`500 ${r.rules} rules, ${r.chars.toLocaleString("en")} chars: ${r.ms.toFixed(2)} ms`);
}
