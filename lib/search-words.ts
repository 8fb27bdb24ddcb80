// Words as article search sees them, one definition for both stores: the words the embedded
// store's FTS5 index holds and the MongoDB store's word arrays are both cut and folded here, so
// the same query finds the same articles on each (SQLite's own unicode61 tokenizer folds
// otherwise: "ﬁ", fullwidth letters, "²" and final sigma stay as typed there).
//
// A word is a run of letters and digits; it is compared lowercased, in compatibility form and
// without diacritics ("Bücher" is "bucher", "ﬁnance" is "finance"), so a query typed without
// accents finds the accented word.

/** Longest query accepted, in characters (GET /api/articles?q=). */
export const MAX_QUERY_CHARS = 200;
/** Most words a query may hold: each one is a match the store intersects. */
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

/** A text's distinct folded words (what the MongoDB store keeps per article, and the embedded store's index reads). */
export const distinctWords = (...texts: string[]): string[] => [...new Set(texts.flatMap(wordsOf))];

/** Fewest letters of a query's last word that make it a prefix (shorter ones match whole words only). */
export const MIN_PREFIX_CHARS = 3;

/** The mark of a query word that matches any word it begins: its last character. */
const PREFIX_MARK = "*";

/** A query word from queryWords: whether it matches any word it begins, and the folded word. */
export const isPrefixWord = (w: string): boolean => w.endsWith(PREFIX_MARK);
export const stemOf = (w: string): string => (isPrefixWord(w) ? w.slice(0, -PREFIX_MARK.length) : w);

/** Whether a folded word of a text matches a query word (queryWords' rule). */
export const wordMatches = (word: string, queryWord: string): boolean => (isPrefixWord(queryWord) ? word.startsWith(stemOf(queryWord)) : word === queryWord);

/**
 * The words of a search query, folded and distinct. Each matches a whole word, except the
 * query's last word of at least MIN_PREFIX_CHARS letters, which matches any word it begins (the
 * word being typed): it comes last, marked (isPrefixWord). Whole-word matches are what an index
 * answers fastest; a prefix is a range of words, and a short or common one a very wide range.
 * A last word that another word of the query begins adds no condition and is left out.
 * Answers a problem for a query that cannot be searched.
 */
export function queryWords(q: string): { words: string[] } | { problem: string } {
  if (q.length > MAX_QUERY_CHARS) return { problem: `q must be at most ${MAX_QUERY_CHARS} characters long (it has ${q.length})` };
  const typed = wordsOf(q);
  const all = [...new Set(typed)];
  if (all.length === 0) return { problem: "q must contain at least one word (letters or digits)" };
  if (all.length > MAX_QUERY_WORDS) return { problem: `q may hold at most ${MAX_QUERY_WORDS} words (it has ${all.length})` };
  const last = typed[typed.length - 1];
  // The last word also typed before it is a whole word there: that condition holds the prefix's.
  if (last.length < MIN_PREFIX_CHARS || typed.indexOf(last) < typed.length - 1) return { words: all };
  const whole = all.filter((w) => w !== last);
  return { words: whole.some((w) => w.startsWith(last)) ? whole : [...whole, `${last}${PREFIX_MARK}`] };
}
