// How an article is laid out as a document. MongoDB keeps the layout it always
// had, so existing collections stay readable: the change time as a Date
// (`updatedAt`) and deletion mirrored in a `deleted` flag so listing can use an
// equality prefix of one index. The embedded SQLite layout follows it, with the
// change time as epoch ms (`changedAt`, as the NeDB release kept it).
import type { Filter, IndexOptions, IndexSpec } from "../../../lib/store/collection.js";
import { LIST_SORT, seqOfAdded, sortAtOf } from "./order.js";
import type { StoredArticle } from "./port.js";

/**
 * `admissionRun`: which batched admission decision wrote the document last (store.ts finishGrouped);
 * `dueAt`: when the reconciler may pick it up (due.ts). Neither leaves the store.
 */
export type ArticleDoc = Omit<StoredArticle, "id" | "changedAt"> & { _id: string; changedAt?: number; updatedAt?: Date; deleted?: boolean; admissionRun?: string; dueAt?: number; words?: string[] };

export interface ArticleLayout {
  toDoc(a: StoredArticle): ArticleDoc;
  fromDoc(d: ArticleDoc): StoredArticle;
  /** Filter fragment matching articles that are not deleted. */
  notDeleted: Filter;
  /** $set fields recording a change at `now`. */
  touched(now: Date): Record<string, unknown>;
  /** Filter fragment: last change before `ms` (epoch ms). */
  changedBefore(ms: number): Filter;
  /** $set fields that go with status "deleted". */
  deletedFields: Record<string, unknown>;
  indexes: Array<[IndexSpec, IndexOptions?]>;
  /** How articles are found by words (search.ts): the driver's full-text index, or a `words` field of each document. */
  search: "index" | "words";
  /** Indexes of older releases no query uses any more: dropped at open, so writes stop paying for them. */
  retiredIndexes: string[];
}

export const mongoLayout: ArticleLayout = {
  toDoc: ({ id, changedAt, ...rest }) => ({ _id: id, ...rest, updatedAt: new Date(changedAt), deleted: rest.status === "deleted" }),
  fromDoc({ _id, updatedAt, deleted: _deleted, changedAt: _unused, admissionRun: _run, dueAt: _due, words: _words, ...rest }) {
    return ordered({ id: _id, ...rest, changedAt: (updatedAt as Date).getTime() });
  },
  notDeleted: { deleted: false },
  touched: (now) => ({ updatedAt: now }),
  changedBefore: (ms) => ({ updatedAt: { $lt: new Date(ms) } }),
  deletedFields: { deleted: true },
  // Each query of store.ts has one whose keys are its equality fields, then its sort
  // (test/contract/article-store-queries.test.ts checks the shapes on MongoDB).
  indexes: [
    // The recrawl's candidates: a project's live articles created since a time, newest first.
    [{ name: "project_listing", keys: { projectId: 1, deleted: 1, added: -1, _id: -1 } }],
    // The list, in the list order (order.ts): by publication date, else creation, then creation order.
    [{ name: "project_order", keys: { projectId: 1, deleted: 1, ...LIST_SORT } }],
    // The list filtered by label (and by status, below: project_status_order(_label) serve any status).
    [{ name: "project_order_label", keys: { projectId: 1, deleted: 1, labels: 1, ...LIST_SORT } }, { multikey: "labels" }],
    // sparse: articles without an externalId never collide; uniqueness spans all projects.
    [{ name: "externalId_unique", keys: { externalId: 1 } }, { unique: true, sparse: true }],
    // getByUrl: a URL's few articles, newest first. (An older release made `project_url` without the order; it is no longer used.)
    [{ name: "project_url_added", keys: { projectId: 1, url: 1, added: -1, _id: -1 } }],
    // The one-time dueAt backfill of pending articles (store.ts).
    [{ name: "status_updatedAt", keys: { status: 1, updatedAt: 1 } }],
    // A project's deferred ones, oldest first. (Named from when it also served the ready list.)
    [{ name: "project_ready", keys: { projectId: 1, status: 1, added: -1, _id: -1 } }],
    // Feeds and the player: a project's ready articles in the list order; also the list filtered by any status (with a label too).
    [{ name: "project_status_order", keys: { projectId: 1, status: 1, ...LIST_SORT } }],
    [{ name: "project_status_order_label", keys: { projectId: 1, status: 1, labels: 1, ...LIST_SORT } }, { multikey: "labels" }],
    // The reconciler: only due articles are in it.
    [{ name: "due", keys: { dueAt: 1, _id: 1 } }, { sparse: true }],
    // Deferred articles of every project, oldest first.
    [{ name: "status_added", keys: { status: 1, added: 1, _id: 1 } }],
    // Search (search.ts): a live article's folded words, each query word a prefix range of them.
    [{ name: "project_words", keys: { projectId: 1, deleted: 1, words: 1 } }, { multikey: "words" }],
  ],
  search: "words",
  // Ordered by `added` then by id string, which scrambled the articles created within one second.
  retiredIndexes: ["project_listing_label", "project_ready_label"],
};

/**
 * SQLite (the embedded default): MongoDB's shape (the `deleted` flag gives the
 * listing index its equality prefix, so a deep page walks the index alone) with
 * the change time as epoch ms, which compares as a plain number. The indexes
 * over `labels` are multikey: the driver keeps their entries in tables of their
 * own (lib/store/sqlite-entries.ts), so a labelled list pages through them too.
 */
export const embeddedLayout: ArticleLayout = {
  toDoc: ({ id, ...rest }) => ({ _id: id, ...rest, deleted: rest.status === "deleted" }),
  fromDoc: ({ _id, changedAt, deleted: _deleted, admissionRun: _run, dueAt: _due, ...rest }) => ordered({ id: _id, ...rest, changedAt: changedAt as number }),
  notDeleted: { deleted: false },
  touched: (now) => ({ changedAt: now.getTime() }),
  changedBefore: (ms) => ({ changedAt: { $lt: ms } }),
  deletedFields: { deleted: true },
  indexes: mongoLayout.indexes.filter(([spec]) => spec.name !== "status_updatedAt" && spec.name !== "project_words").map(([spec, o]) => [ascending(spec), o]),
  search: "index",
  retiredIndexes: mongoLayout.retiredIndexes,
};

/** A document an older release wrote has no order keys until the store's one-time pass gives them (store.ts): the same values meanwhile. */
function ordered(a: Omit<StoredArticle, "sortAt" | "seq"> & { sortAt?: number; seq?: number }): StoredArticle {
  if (a.seq !== undefined && a.sortAt !== undefined) return a as StoredArticle;
  const seq = a.seq ?? seqOfAdded(a.added);
  return { ...a, seq, sortAt: a.sortAt ?? sortAtOf(a.published, a.added, seq) };
}

/**
 * The same keys in ascending order. SQLite walks an index backwards as readily as forwards, so
 * "newest first" needs no descending key; and new articles carry the largest `added`, so with
 * ascending keys they land at the end of their range, where SQLite fills pages up, not at its
 * start, where every full page splits in two and stays half empty (the descending listing
 * indexes took twice their payload: 142 B per article for 69 B of keys).
 */
function ascending(spec: IndexSpec): IndexSpec {
  return { ...spec, keys: Object.fromEntries(Object.keys(spec.keys).map((k) => [k, 1])) };
}
