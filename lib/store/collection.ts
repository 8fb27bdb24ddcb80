// A small document-collection port: the subset of the MongoDB query and
// update language that both MongoDB and the embedded SQLite driver understand, so a
// store's logic is written once and runs on either. Filters and updates use
// MongoDB syntax ($set, $unset, $inc, $push; $in, $nin, $ne, $lt, $gte,
// $exists, $or, $and).

export type Filter = Record<string, unknown>;
export type Update = Record<string, unknown>;
export type SortSpec = Record<string, 1 | -1>;

export interface FindOptions {
  sort?: SortSpec;
  skip?: number;
  limit?: number;
  /** Inclusion projection, e.g. {_id: 1, status: 1}. */
  projection?: Record<string, 1>;
  /**
   * Top-level fields the caller does not read (without a projection): they are left out of the
   * answer, so a list page does not carry (or, embedded, inflate) every article's text.
   */
  omit?: string[];
  /**
   * The index (its IndexSpec name) the query walks, for a query two indexes could serve where
   * only the data says which is cheap. SQLite keeps no statistics and guesses: it read the
   * reconciler's due articles through the status index, a million parked ones every pass.
   */
  hint?: string;
}

export interface IndexSpec {
  /** MongoDB index name; kept stable because existing deployments already have these indexes. */
  name: string;
  /**
   * MongoDB index keys; the embedded driver creates the same compound index
   * (an indexed field should hold single values of one type there).
   */
  keys: SortSpec;
}

export interface IndexOptions {
  unique?: boolean;
  /** Only documents that have the first key are in the index (also for a compound one). */
  sparse?: boolean;
  /**
   * The one key that holds an array: the index has an entry per distinct element (MongoDB makes
   * such an index by itself; the embedded driver keeps the entries in a table of their own, and
   * serves from it a find whose filter is equality on exactly the leading keys). Not with unique or sparse.
   */
  multikey?: string;
}

export interface UpdateResult {
  matched: number;
  modified: number;
}

/** A unique index refused the write. */
export class DuplicateKeyError extends Error {
  /** The indexed field that clashed when the driver can tell, e.g. "_id" or "externalId". */
  constructor(readonly field: string | undefined) {
    super(field ? `duplicate value for unique field '${field}'` : "duplicate value for a unique field");
    this.name = "DuplicateKeyError";
  }
}

/**
 * A count of documents per group, kept by the collection with every write so
 * that reading it costs the same at ten documents or ten million (list
 * totals, status metrics). `groups` must depend on the document alone.
 */
export interface TallySpec {
  /** Stable: the counts are stored under it. */
  name: string;
  /** The groups a document counts in; [] when it counts in none. */
  groups(doc: Record<string, unknown>): string[];
  /**
   * The fields `groups` reads. Lets a driver make its count update conditional on them
   * (MongoDB: one round trip fewer after a write that moves a document between groups).
   */
  fields?: string[];
}

/**
 * A full-text index over some of a collection's fields (the embedded driver: an FTS5 table kept
 * in the same transaction as the documents). Words are folded as lib/search-words.ts folds them.
 */
export interface TextIndexSpec {
  /** Stable: the index is stored under it; a spec with other columns rebuilds it. */
  name: string;
  /** Column names, in order. */
  columns: string[];
  /** Relevance: a document ranks by how many of the query's words this column holds (a title's), then newest first. */
  rankColumn: string;
  /**
   * The field every search is limited to one value of (a project): its value is indexed beside
   * the words, so a search never reads another scope's matches.
   */
  scope: string;
  /** The columns' text of a document, in the order of `columns`; null: the document is not indexed (a deleted one). */
  textOf(doc: Record<string, unknown>): string[] | null;
}

/** How far a search reads its matches. */
export interface SearchBounds {
  /** Matches counted: past this many, the count is this many and `capped` (a search engine's "more than"). */
  countUpTo: number;
  /** The newest matches that are ranked by relevance; older ones follow them, newest first. */
  rankWithin: number;
}

export interface TextSearchOptions extends SearchBounds {
  limit: number;
  skip: number;
  /** Top-level fields left out of the answer (FindOptions.omit). */
  omit?: string[];
}

/** Fields computed from another numeric field of the same document (DocumentCollection.fillDerived). */
export interface DerivedFill {
  /** Documents that have this field are left alone: a page done twice changes nothing. */
  unless: string;
  fields: Record<string, { from: string; times: number }>;
}

/** `D` is the stored document; every document has a string `_id`. */
export interface DocumentCollection<D extends { _id: string }> {
  /**
   * Grows whenever reads may see a write they could not see before, so what was read at an
   * unchanged value is still current. Only where this process makes every write (the embedded
   * SQLite driver); absent where other processes write too (MongoDB).
   */
  changes?(): number;
  /**
   * As `changes`, but does not grow for a plain insert of new documents (insertOne): what was
   * read of documents already stored at an unchanged value is still current. Where `changes` is.
   */
  rewrites?(): number;
  /** Throws DuplicateKeyError when a unique index refuses the document. */
  insertOne(doc: D): Promise<void>;
  findOne(filter: Filter): Promise<D | null>;
  find(filter: Filter, opts?: FindOptions): Promise<D[]>;
  /** Scans what the filter selects: for bounded sets only; a whole project or collection is counted by a tally. */
  count(filter: Filter): Promise<number>;
  /** Atomic conditional write of at most one document. Throws DuplicateKeyError. */
  updateOne(filter: Filter, update: Update): Promise<UpdateResult>;
  /**
   * Like updateOne, returning the document as written, or null when nothing matched.
   * `durable: false` may answer before the write is on stable storage: only for
   * writes that are harmless to lose in a power failure (a lease that would expire anyway).
   */
  findOneAndUpdate(filter: Filter, update: Update, opts?: { durable?: boolean }): Promise<D | null>;
  updateMany(filter: Filter, update: Update): Promise<UpdateResult>;
  /**
   * Each conditional update on its own document, not atomic together, in one round trip
   * where the driver can. Answers how many matched in all, not which.
   */
  bulkUpdate(ops: Array<{ filter: Filter; update: Update }>): Promise<{ matched: number; /** The documents of the filters' ids as written, where the driver read them anyway. */ docs?: D[] }>;
  /**
   * Atomic: applies the modifiers to the document matching `key` (plain
   * field values only), or creates it from `key` and the modifiers.
   * `durable: false` may answer before the write reaches the disk.
   */
  upsertOne(key: Record<string, string | number>, update: Update, opts?: { durable?: boolean }): Promise<void>;
  deleteMany(filter: Filter): Promise<number>;
  /**
   * Idempotent. Declares a tally before the store's first write; when the
   * collection has none under this name yet (an upgraded install), the counts
   * are built once from the documents.
   */
  ensureTally(spec: TallySpec): Promise<void>;
  /** Documents counting in `group` now; 0 for a group never seen. */
  tally(name: string, group: string): Promise<number>;
  /** Every non-empty group of the tally with its count. */
  tallies(name: string): Promise<Map<string, number>>;
  /**
   * Recomputes every declared tally from the documents, in one pass over them: the repair
   * for counts a failure left off (a server stopped between a write and its count). Run it
   * while writes are quiet: a write during the pass may be counted from before or after.
   * Absent where the counts change in the same transaction as the documents (SQLite).
   */
  recount?(): Promise<void>;
  /**
   * Counts the documents whose writer stopped between writing one and counting it (a process
   * killed mid-write); answers how many. Call it once every tally is declared. Absent where
   * the counts change in the same transaction as the documents (SQLite).
   */
  settleTallies?(): Promise<number>;
  /** Idempotent: opening the same store again keeps the existing index. */
  ensureIndex(spec: IndexSpec, opts?: IndexOptions): Promise<void>;
  /**
   * Idempotent. Declares a text index before the store's first write; answers once it exists,
   * with `complete`, which settles once the documents written before it existed are in it too
   * (an upgraded collection is filled in the background, in small transactions). Only where the
   * driver has full-text search of its own (SQLite FTS5).
   */
  ensureTextIndex?(spec: TextIndexSpec): Promise<{ complete: Promise<void> }>;
  /**
   * The documents of one scope (TextIndexSpec.scope) whose indexed columns hold every word of
   * `words` (lib/search-words.ts queryWords: folded, each a whole word or a marked prefix), anywhere, and that match `filter` (may be empty):
   * among the newest `rankWithin` matches the most relevant first (TextIndexSpec.rankColumn),
   * then the newest stored first; older matches after them, newest first. `count` is the number
   * of matches up to `countUpTo`, `capped` when more match. Costs in proportion to the matches
   * read (at most countUpTo + 1), more with a filter (each one's document is read to check it).
   */
  searchText?(index: string, words: readonly string[], scope: string, filter: Filter, opts: TextSearchOptions): Promise<{ count: number; capped: boolean; docs: D[] }>;
  /**
   * A one-time fill of fields an older release did not write, computed in the database itself
   * where the driver can (SQLite; MongoDB reads the page's source fields): on the documents of one page, the first `limit` by id
   * after `after`, that lack `unless`, sets each field of `fields` to the
   * document's own number `from` times `times`. The fields must be in no tally, multikey or text
   * index. Answers the page's last id (undefined once past the last document) and how many were set.
   */
  fillDerived(spec: DerivedFill, page: { after: string; limit: number }): Promise<{ last?: string; modified: number }>;
  /** Drops the index of that name (an index no query uses any more); a no-op when there is none. */
  dropIndex(name: string): Promise<void>;
  /** Releases what the driver holds for this collection (the embedded one compacts its file). */
  close(): Promise<void>;
}

/** Null or missing, spelled out for every driver (MongoDB's {field: null} means both). */
export const isNullOrMissing = (field: string): Filter => ({ $or: [{ [field]: null }, { [field]: { $exists: false } }] });
