// Finding articles by words of their title and text (ArticleStore.list with `words`). The
// embedded store asks its FTS5 index (lib/store/sqlite-search.ts); MongoDB keeps each live
// article's distinct folded words in `words`, a multikey index with the project ahead of it,
// and answers each whole query word with that word and a prefix one with an anchored regex over
// that index (MongoDB's $text index neither matches prefixes nor runs on the test suite's
// MongoDB stand-in). Which query word is a prefix: lib/search-words.ts queryWords.
//
// Relevance: an article whose title holds the words comes before one whose text alone does;
// more precisely, the more query words its title holds, the higher; equally relevant ones the
// latest created first (MongoDB: by the creation sequence `seq`, order.ts; the embedded store: by
// the order they were stored in, which its index knows without reading each match, and which is
// the creation order). The same rule on both stores. (FTS5's bm25 would need the
// word positions, twice the index, and gives a word found in most articles no weight at all.)
import { distinctWords, isPrefixWord, stemOf, wordMatches, wordsOf } from "../../../lib/search-words.js";
import type { DocumentCollection, Filter, TextIndexSpec } from "../../../lib/store/collection.js";
import type { ArticleDoc } from "./layout.js";
import { seqOfAdded } from "./order.js";
import { LIST_OMITS } from "./port.js";

/** The embedded store's index. */
export const SEARCH_INDEX: TextIndexSpec = {
  name: "search",
  columns: ["title", "body"],
  rankColumn: "title",
  scope: "projectId",
  textOf: (d) => (d.status === "deleted" ? null : [d.title as string, searchableText(d)]),
};

/** An article's text as search reads it: the markup of an HTML text (parse: true) is no word of it. */
export function searchableText(d: Record<string, unknown>): string {
  const text = (d.text as string | undefined) ?? "";
  return d.parse ? text.replace(/<[^>]*>/g, " ").replace(/&[#a-z0-9]+;/gi, " ") : text;
}

/** The `words` field of an article on MongoDB. */
export const wordsField = (d: Record<string, unknown>): string[] => distinctWords(d.title as string, searchableText(d));

/** MongoDB's index for it (mongoLayout): the project and the listing's deleted flag fixed, then a word's range. */
export const WORDS_INDEX = "project_words";

/**
 * The page of the project's articles matching `filter` whose words include each query word (a
 * marked one as a prefix), ranked, and the number of all matches (MongoDB). Reads the matches' ids, titles and
 * times from the index's range, then the page's documents.
 */
export async function searchByWords(col: DocumentCollection<ArticleDoc>, filter: Filter, words: readonly string[], limit: number, offset: number): Promise<{ count: number; docs: ArticleDoc[] }> {
  const matching = { ...filter, words: { $all: words.map((w) => (isPrefixWord(w) ? new RegExp(`^${stemOf(w)}`) : w)) } };
  const found = await col.find(matching, { projection: { _id: 1, title: 1, seq: 1, added: 1 }, hint: WORDS_INDEX });
  const inTitle = (title: string) => {
    const own = wordsOf(title);
    return words.filter((w) => own.some((o) => wordMatches(o, w))).length;
  };
  // An article of a release before the creation sequence, not yet given one (store.ts), by its creation second.
  const ranked = found.map((d) => ({ id: d._id, seq: d.seq ?? seqOfAdded(d.added), score: inTitle(d.title) }));
  ranked.sort((a, b) => b.score - a.score || b.seq - a.seq || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
  const ids = ranked.slice(offset, offset + limit).map((r) => r.id);
  if (ids.length === 0) return { count: ranked.length, docs: [] };
  const docs = await col.find({ projectId: filter.projectId, _id: { $in: ids } }, { omit: [...LIST_OMITS] });
  const byId = new Map(docs.map((d) => [d._id, d]));
  // One deleted between the two reads is left out of the page.
  return { count: ranked.length, docs: ids.flatMap((id) => byId.get(id) ?? []) };
}

/**
 * The embedded store's search: the index ranks, the page comes with the count. Deleted articles
 * are not in the index, so only a status or label needs the documents.
 */
export function searchByIndex(col: DocumentCollection<ArticleDoc>, filter: Filter, words: readonly string[], limit: number, offset: number): Promise<{ count: number; docs: ArticleDoc[] }> {
  const { projectId, deleted: _deleted, ...rest } = filter;
  return col.searchText!(SEARCH_INDEX.name, words, projectId as string, rest, { limit, skip: offset, omit: [...LIST_OMITS] });
}

/**
 * Articles an older release stored without `words` (MongoDB), given them once, by pages in
 * `_id` order; each write is conditional on the revision read, so a concurrent edit (which
 * writes its own words) wins.
 */
export async function backfillWords(col: DocumentCollection<ArticleDoc>): Promise<void> {
  for (let after = ""; ; ) {
    const page = await col.find({ _id: { $gt: after }, deleted: false, words: { $exists: false } }, { sort: { _id: 1 }, limit: 500, projection: { _id: 1, title: 1, text: 1, parse: 1, revision: 1 } });
    if (page.length === 0) return;
    await col.bulkUpdate(page.map((d) => ({ filter: { _id: d._id, revision: d.revision, words: { $exists: false } }, update: { $set: { words: wordsField(d) } } })));
    if (page.length < 500) return;
    after = page[page.length - 1]._id;
  }
}
