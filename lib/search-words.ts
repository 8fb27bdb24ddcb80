// Words as article search sees them, one definition for both stores: SQLite's FTS5 tokenizer
// (unicode61 with remove_diacritics 2) and the MongoDB store's folded word arrays must cut and
// fold a text the same way, or the same query would find different articles on each.
//
// A word is a run of letters and digits; it is compared lowercased and without diacritics
// ("Bücher" is "bucher"), so a query typed without accents finds the accented word.

/** Longest query accepted, in characters (GET /api/articles?q=). */
export const MAX_QUERY_CHARS = 200;
/** Most words a query may hold: each one is a prefix match the store intersects. */
export const MAX_QUERY_WORDS = 8;

const WORD = /[\p{L}\p{N}]+/gu;
const MARKS = /\p{M}+/gu;

/** A word folded: decomposed, diacritics dropped, lowercased. */
export const foldWord = (w: string): string => w.normalize("NFKD").replace(MARKS, "").toLowerCase();

/** The folded words of a text, in order, repeats kept. */
export function wordsOf(text: string): string[] {
  // Folded first: a decomposed letter's mark would otherwise split the word in two.
  return foldWord(text).match(WORD) ?? [];
}

/** A text's distinct folded words (what the MongoDB store keeps per article). */
export const distinctWords = (...texts: string[]): string[] => [...new Set(texts.flatMap(wordsOf))];

/**
 * The words of a search query: distinct, folded, a word that is a prefix of another dropped
 * (it adds no condition). Answers a problem for a query that cannot be searched.
 */
export function queryWords(q: string): { words: string[] } | { problem: string } {
  if (q.length > MAX_QUERY_CHARS) return { problem: `q must be at most ${MAX_QUERY_CHARS} characters long (it has ${q.length})` };
  const all = distinctWords(q);
  if (all.length === 0) return { problem: "q must contain at least one word (letters or digits)" };
  if (all.length > MAX_QUERY_WORDS) return { problem: `q may hold at most ${MAX_QUERY_WORDS} words (it has ${all.length})` };
  return { words: all.filter((w) => !all.some((o) => o !== w && o.startsWith(w))) };
}
