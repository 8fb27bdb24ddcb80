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
//
// Bounded, as search engines bound it (SEARCH_BOUNDS): relevance orders the newest 1,000
// matches, and older matches follow them, newest first; the count is exact up to 1,000 and past
// that is 1,000 with `capped` (docs/api.md: `countCapped`), while paging goes on through every
// match. Two common words match most of a large archive: counting and ranking every match cost
// 60–800 ms of CPU at a million articles, the bounded walk a few (bench/README.md). A bulk job
// by a search counts as far as a job may take (10,000, jobs/handlers.ts), in the same order.
import { distinctWords, isPrefixWord, stemOf, wordMatches, wordsOf } from "../../../lib/search-words.js";
import type { DocumentCollection, Filter, SearchBounds, TextIndexSpec } from "../../../lib/store/collection.js";
import type { ArticleDoc } from "./layout.js";
import { seqOfAdded } from "./order.js";
import { LIST_OMITS } from "./port.js";

/** How far a search reads its matches (TextSearchOptions: countUpTo, rankWithin); the module's comment. */
export const SEARCH_BOUNDS: SearchBounds = { countUpTo: 1_000, rankWithin: 1_000 };

/** A page of a search, its count and whether more matched than it counts. */
export interface SearchPage {
  count: number;
  capped: boolean;
  docs: ArticleDoc[];
}

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
 * marked one as a prefix), in SEARCH_BOUNDS' order, and their count (MongoDB). Reads the matches' ids, titles and
 * times from the index's range, then the page's documents.
 */
export async function searchByWords(col: DocumentCollection<ArticleDoc>, filter: Filter, words: readonly string[], limit: number, offset: number, bounds: SearchBounds): Promise<SearchPage> {
  const matching = { ...filter, words: { $all: words.map((w) => (isPrefixWord(w) ? new RegExp(`^${stemOf(w)}`) : w)) } };
  const found = await col.find(matching, { projection: { _id: 1, title: 1, seq: 1, added: 1 }, hint: WORDS_INDEX });
  const inTitle = (title: string) => {
    const own = wordsOf(title);
    return words.filter((w) => own.some((o) => wordMatches(o, w))).length;
  };
  // An article of a release before the creation sequence, not yet given one (store.ts), by its creation second.
  const newest = found.map((d) => ({ id: d._id, seq: d.seq ?? seqOfAdded(d.added), title: d.title }));
  newest.sort((a, b) => b.seq - a.seq || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
  const capped = newest.length > bounds.countUpTo;
  const head = newest.slice(0, bounds.rankWithin).map((d, at) => ({ id: d.id, at, score: inTitle(d.title) }));
  head.sort((a, b) => b.score - a.score || a.at - b.at);
  const ordered = [...head.map((d) => d.id), ...newest.slice(head.length).map((d) => d.id)];
  const count = Math.min(newest.length, bounds.countUpTo);
  const ids = ordered.slice(offset, offset + limit);
  if (ids.length === 0) return { count, capped, docs: [] };
  const docs = await col.find({ projectId: filter.projectId, _id: { $in: ids } }, { omit: [...LIST_OMITS] });
  const byId = new Map(docs.map((d) => [d._id, d]));
  // One deleted between the two reads is left out of the page.
  return { count, capped, docs: ids.flatMap((id) => byId.get(id) ?? []) };
}

/**
 * The embedded store's search: the index ranks, the page comes with the count. Deleted articles
 * are not in the index, so only a status or label needs the documents.
 */
export function searchByIndex(col: DocumentCollection<ArticleDoc>, filter: Filter, words: readonly string[], limit: number, offset: number, bounds: SearchBounds): Promise<SearchPage> {
  const { projectId, deleted: _deleted, ...rest } = filter;
  return col.searchText!(SEARCH_INDEX.name, words, projectId as string, rest, { limit, skip: offset, omit: [...LIST_OMITS], ...bounds });
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
