// How an article is laid out as a document. The two drivers keep the layouts
// they always had, so existing NeDB files and MongoDB collections stay readable:
// MongoDB stores the change time as a Date (`updatedAt`) and mirrors deletion in
// a `deleted` flag so listing can use an equality prefix of one index; NeDB keeps
// `changedAt` as epoch ms and has single-field indexes only.
import type { Filter, IndexOptions, IndexSpec } from "../../../lib/store/collection.js";
import type { StoredArticle } from "./port.js";

/**
 * `admissionRun`: which batched admission decision wrote the document last (store.ts finishGrouped);
 * `dueAt`: when the reconciler may pick it up (due.ts). Neither leaves the store.
 */
export type ArticleDoc = Omit<StoredArticle, "id" | "changedAt"> & { _id: string; changedAt?: number; updatedAt?: Date; deleted?: boolean; admissionRun?: string; dueAt?: number };

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
}

export const mongoLayout: ArticleLayout = {
  toDoc: ({ id, changedAt, ...rest }) => ({ _id: id, ...rest, updatedAt: new Date(changedAt), deleted: rest.status === "deleted" }),
  fromDoc({ _id, updatedAt, deleted: _deleted, changedAt: _unused, admissionRun: _run, dueAt: _due, ...rest }) {
    return { id: _id, ...rest, changedAt: (updatedAt as Date).getTime() };
  },
  notDeleted: { deleted: false },
  touched: (now) => ({ updatedAt: now }),
  changedBefore: (ms) => ({ updatedAt: { $lt: new Date(ms) } }),
  deletedFields: { deleted: true },
  // Each query of store.ts has one whose keys are its equality fields, then its sort
  // (test/contract/article-store-queries.test.ts checks the shapes on MongoDB).
  indexes: [
    [{ name: "project_listing", keys: { projectId: 1, deleted: 1, added: -1, _id: -1 } }],
    // sparse: articles without an externalId never collide; uniqueness spans all projects.
    [{ name: "externalId_unique", keys: { externalId: 1 } }, { unique: true, sparse: true }],
    // getByUrl: a URL's few articles, newest first. (An older release made `project_url` without the order; it is no longer used.)
    [{ name: "project_url_added", keys: { projectId: 1, url: 1, added: -1, _id: -1 } }],
    // The one-time dueAt backfill of pending articles (store.ts).
    [{ name: "status_updatedAt", keys: { status: 1, updatedAt: 1 } }],
    // Feeds and the player: a project's ready articles, newest first; also a project's deferred ones.
    [{ name: "project_ready", keys: { projectId: 1, status: 1, added: -1, _id: -1 } }],
    [{ name: "project_ready_label", keys: { projectId: 1, status: 1, labels: 1, added: -1, _id: -1 } }],
    // The reconciler: only due articles are in it.
    [{ name: "due", keys: { dueAt: 1, _id: 1 } }, { sparse: true }],
    // Deferred articles of every project, oldest first.
    [{ name: "status_added", keys: { status: 1, added: 1, _id: 1 } }],
  ],
};

export const nedbLayout: ArticleLayout = {
  toDoc: ({ id, ...rest }) => ({ _id: id, ...rest }),
  fromDoc: ({ _id, changedAt, admissionRun: _run, dueAt: _due, ...rest }) => ({ id: _id, ...rest, changedAt: changedAt as number }),
  notDeleted: { status: { $ne: "deleted" } },
  touched: (now) => ({ changedAt: now.getTime() }),
  changedBefore: (ms) => ({ changedAt: { $lt: ms } }),
  deletedFields: {},
  // NeDB indexes single fields only and skips the compound ones (the SQLite driver
  // that replaces it keeps them). No single projectId or status index: NeDB keeps
  // one array per key, and every write of an article searched and copied the
  // whole array of its project and of its status (in a one-project install under
  // load: every article, and every waiting one; together half a create's CPU at
  // 2,600 articles, growing with each).
  indexes: [
    [{ name: "externalId_unique", keys: { externalId: 1 } }, { unique: true, sparse: true }],
    [{ name: "url", keys: { url: 1 } }, { sparse: true }],
    [{ name: "project_listing", keys: { projectId: 1, status: 1, added: -1, _id: -1 } }],
    [{ name: "project_added", keys: { projectId: 1, added: -1, _id: -1 } }],
    [{ name: "project_url_added", keys: { projectId: 1, url: 1, added: -1, _id: -1 } }],
    [{ name: "due", keys: { dueAt: 1, _id: 1 } }, { sparse: true }],
    [{ name: "status_added", keys: { status: 1, added: 1, _id: 1 } }],
  ],
};
