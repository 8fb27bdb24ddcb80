// How an article is laid out as a document. The two drivers keep the layouts
// they always had, so existing NeDB files and MongoDB collections stay readable:
// MongoDB stores the change time as a Date (`updatedAt`) and mirrors deletion in
// a `deleted` flag so listing can use an equality prefix of one index; NeDB keeps
// `changedAt` as epoch ms and has single-field indexes only.
import type { Filter, IndexOptions, IndexSpec } from "../../../lib/store/collection.js";
import type { StoredArticle } from "./port.js";

/** `admissionRun`: which batched admission decision wrote the document last (store.ts finishGrouped); never leaves the store. */
export type ArticleDoc = Omit<StoredArticle, "id" | "changedAt"> & { _id: string; changedAt?: number; updatedAt?: Date; deleted?: boolean; admissionRun?: string };

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
  fromDoc({ _id, updatedAt, deleted: _deleted, changedAt: _unused, admissionRun: _run, ...rest }) {
    return { id: _id, ...rest, changedAt: (updatedAt as Date).getTime() };
  },
  notDeleted: { deleted: false },
  touched: (now) => ({ updatedAt: now }),
  changedBefore: (ms) => ({ updatedAt: { $lt: new Date(ms) } }),
  deletedFields: { deleted: true },
  indexes: [
    [{ name: "project_listing", keys: { projectId: 1, deleted: 1, added: -1, _id: -1 } }],
    // sparse: articles without an externalId never collide; uniqueness spans all projects.
    [{ name: "externalId_unique", keys: { externalId: 1 } }, { unique: true, sparse: true }],
    [{ name: "project_url", keys: { projectId: 1, url: 1 } }],
    [{ name: "status_updatedAt", keys: { status: 1, updatedAt: 1 } }],
    // Feeds and the player: a project's ready articles, newest first.
    [{ name: "project_ready", keys: { projectId: 1, status: 1, added: -1, _id: -1 } }],
  ],
};

export const nedbLayout: ArticleLayout = {
  toDoc: ({ id, ...rest }) => ({ _id: id, ...rest }),
  fromDoc: ({ _id, changedAt, admissionRun: _run, ...rest }) => ({ id: _id, ...rest, changedAt: changedAt as number }),
  notDeleted: { status: { $ne: "deleted" } },
  touched: (now) => ({ changedAt: now.getTime() }),
  changedBefore: (ms) => ({ changedAt: { $lt: ms } }),
  deletedFields: {},
  // The embedded driver indexes the first key of each; names are for MongoDB only.
  // No projectId or status index: NeDB keeps one array per key, and every
  // write of an article searched and copied the whole array of its project
  // and of its status (in a one-project install under load: every article,
  // and every waiting one; together half a create's CPU at 2,600 articles,
  // growing with each). Listing and the periodic reconciler, scheduler and
  // status counts scan instead; listing nearly did anyway (the index only
  // narrowed to the project, whose articles were all sorted in memory).
  indexes: [
    [{ name: "externalId_unique", keys: { externalId: 1 } }, { unique: true, sparse: true }],
    [{ name: "url", keys: { url: 1 } }, { sparse: true }],
  ],
};
