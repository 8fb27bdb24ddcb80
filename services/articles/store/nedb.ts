// Embedded article store: one NeDB datafile under `${dataDir}/articles/`.
// NeDB runs every operation through one queue, so each conditional update
// below is atomic with respect to the others, like a single-document write
// in MongoDB.
import { mkdir } from "node:fs/promises";
import path from "node:path";
import nedb from "@seald-io/nedb";
import {
  ARTICLE_STATUSES,
  DuplicateExternalIdError,
  DuplicateIdError,
  initialArticle,
  unixSeconds,
  type ArticlePage,
  type ArticlePatch,
  type ArticleStatus,
  type ArticleStore,
  type FindStaleOptions,
  type NewArticle,
  type StaleArticle,
  type StoredArticle,
  type StoredAudio,
  type UpdateOutcome,
  DEFERRED_STATUSES,
  REVISION_SCOPED,
  type AdmissionResult,
} from "./port.js";
import { admissionOps, patchOps, unsetAll } from "./patch.js";

// The package is CommonJS with `export default` typings: under NodeNext the
// default import is the class at run time but typed as the module wrapper.
type Datastore<S> = nedb.default<S>;
const Datastore = nedb as unknown as typeof nedb.default;

type Doc = Omit<StoredArticle, "id"> & { _id: string };

const toDoc = ({ id, ...rest }: StoredArticle): Doc => ({ _id: id, ...rest });
const fromDoc = ({ _id, ...rest }: Doc): StoredArticle => ({ id: _id, ...rest });

export interface NedbArticleStoreOptions {
  /** Root data directory; the file lives in `<dataDir>/articles/`. Omit for an in-memory store. */
  dataDir?: string;
  /** Rewrites the append-only datafile periodically; default 10 minutes. */
  compactEveryMs?: number;
}

// Not admitted (or finished): a job for them is left over from an older decision.
const NOT_CLAIMABLE = ["deleted", "ready", "rejected", "limit_reached", "no_money"] as ArticleStatus[];

export async function openNedbArticleStore(opts: NedbArticleStoreOptions = {}): Promise<ArticleStore> {
  let db: Datastore<Doc>;
  if (opts.dataDir) {
    const dir = path.join(opts.dataDir, "articles");
    await mkdir(dir, { recursive: true });
    db = new Datastore<Doc>({ filename: path.join(dir, "articles.db") });
  } else {
    db = new Datastore<Doc>({ inMemoryOnly: true });
  }
  await db.loadDatabaseAsync();
  // sparse: articles without an externalId must not collide with each other.
  await db.ensureIndexAsync({ fieldName: "externalId", unique: true, sparse: true });
  await db.ensureIndexAsync({ fieldName: "projectId" });
  await db.ensureIndexAsync({ fieldName: "url", sparse: true });
  await db.ensureIndexAsync({ fieldName: "status" });
  if (opts.dataDir) db.setAutocompactionInterval(opts.compactEveryMs ?? 10 * 60_000);

  const live = { $ne: "deleted" };
  // NeDB narrows a query by the LAST indexed field with a plain value in it,
  // so every query below names its most selective field (_id, externalId, url) last.

  const one = async (query: object): Promise<StoredArticle | null> => {
    const d = (await db.findOneAsync(query)) as unknown as Doc | null;
    return d ? fromDoc(d) : null;
  };

  /** Runs a conditional single-document update and returns the new document, or null when the condition failed. */
  const conditional = async (query: object, update: object): Promise<StoredArticle | null> => {
    const r = await db.updateAsync(query, update, { returnUpdatedDocs: true });
    const d = r.affectedDocuments as unknown as Doc | null;
    return r.numAffected === 1 && d ? fromDoc(d) : null;
  };

  const isUniqueViolation = (e: unknown): e is { key: unknown } => (e as { errorType?: string })?.errorType === "uniqueViolated";

  return {
    async insert(a: NewArticle, now = new Date()) {
      const doc = toDoc(initialArticle(a, now));
      try {
        return fromDoc((await db.insertAsync(doc)) as unknown as Doc);
      } catch (e) {
        if (!isUniqueViolation(e)) throw e;
        // The _id index is checked first, so a clash on the id shows up as its key.
        if (e.key === a.id && (await db.findOneAsync({ _id: a.id }))) throw new DuplicateIdError(a.id);
        throw new DuplicateExternalIdError(a.externalId ?? "");
      }
    },

    get: (projectId, id) => one({ projectId, _id: id }),
    getByExternalId: (projectId, externalId) => one({ projectId, externalId }),

    async getByUrl(projectId, url) {
      const docs = (await db.findAsync({ projectId, url })) as unknown as Doc[];
      if (docs.length === 0) return null;
      docs.sort((x, y) => Number(x.status === "deleted") - Number(y.status === "deleted") || y.added - x.added || (x._id < y._id ? 1 : -1));
      return fromDoc(docs[0]);
    },

    async list(projectId, limit, offset): Promise<ArticlePage> {
      const query = { projectId, status: live };
      const [count, docs] = await Promise.all([
        db.countAsync(query) as unknown as Promise<number>,
        db.findAsync(query).sort({ added: -1, _id: -1 }).skip(offset).limit(limit) as unknown as Promise<Doc[]>,
      ]);
      return { count, items: docs.map(fromDoc) };
    },

    async update(projectId, id, expectedRevision, patch: ArticlePatch, now = new Date()): Promise<UpdateOutcome> {
      const { $set, $unset } = patchOps(patch);
      try {
        const updated = await conditional(
          { projectId, revision: expectedRevision, status: live, _id: id },
          {
            $set: { ...$set, status: "waiting", errors: [], types: [], changedAt: now.getTime() },
            $unset: { ...$unset, ...unsetAll(REVISION_SCOPED), crawledText: true },
            $inc: { revision: 1 },
          },
        );
        if (updated) return { ok: true, article: updated };
      } catch (e) {
        if (isUniqueViolation(e)) throw new DuplicateExternalIdError(patch.externalId ?? "");
        throw e;
      }
      const current = await one({ projectId, _id: id });
      if (!current) return { ok: false, reason: "not_found" };
      return { ok: false, reason: current.status === "deleted" ? "deleted" : "revision_changed" };
    },

    async markDeleted(projectId, id, now = new Date()) {
      const changed = await conditional({ projectId, status: live, _id: id }, { $set: { status: "deleted", changedAt: now.getTime() } });
      return changed ?? one({ projectId, _id: id });
    },

    claim: (id, revision, now = new Date()) =>
      conditional({ revision, status: { $nin: NOT_CLAIMABLE }, _id: id }, { $set: { status: "processing", changedAt: now.getTime() } }),

    async reportStatus(id, revision, status, error, now = new Date()) {
      const update: Record<string, object> = { $set: { status, changedAt: now.getTime() } };
      if (error) update.$push = { errors: { error, date: now.toISOString() } };
      return (await conditional({ revision, status: live, _id: id }, update)) !== null;
    },

    async complete(id, revision, audio: StoredAudio, preview: StoredAudio | undefined, now = new Date()) {
      const $set: Record<string, unknown> = { status: "ready", audio: { ...audio }, updated: unixSeconds(now), changedAt: now.getTime() };
      const $unset: Record<string, true> = { error: true };
      if (preview) $set.audioPreview = { ...preview };
      else $unset.audioPreview = true;
      return (await conditional({ revision, status: live, _id: id }, { $set, $unset })) !== null;
    },

    async fail(id, revision, error, now = new Date()) {
      return (
        (await conditional(
          { revision, status: live, _id: id },
          {
            $set: { status: "errored", error, updated: unixSeconds(now), changedAt: now.getTime() },
            $push: { errors: { error, date: now.toISOString() } },
          },
        )) !== null
      );
    },

    async findStale(statuses: readonly ArticleStatus[], olderThan: number, o: FindStaleOptions = {}): Promise<StaleArticle[]> {
      const query: Record<string, unknown> = { status: { $in: [...statuses] }, changedAt: { $lt: olderThan } };
      if (o.afterId !== undefined) query._id = { $gt: o.afterId };
      const docs = (await db.findAsync(query, { _id: 1, projectId: 1, revision: 1, admission: 1 }).sort({ _id: 1 }).limit(o.limit ?? 500)) as unknown as Doc[];
      return docs.map((d) => ({ id: d._id, projectId: d.projectId, revision: d.revision, ...(d.admission === "pending" ? { pendingAdmission: true } : {}) }));
    },

    getById: (id) => one({ _id: id }),

    claimAdmission: (id, revision, leaseMs, now = new Date()) =>
      conditional(
        { revision, admission: "pending", status: live, $or: [{ admittingUntil: { $exists: false } }, { admittingUntil: { $lt: now.getTime() } }], _id: id },
        { $set: { admittingUntil: now.getTime() + leaseMs } },
      ),

    finishAdmission(id, revision, r: AdmissionResult, now = new Date()) {
      const { $set, $unset } = admissionOps(r);
      return conditional({ revision, admission: "pending", status: live, _id: id }, { $set: { ...$set, changedAt: now.getTime() }, $unset });
    },

    async findDeferred(projectId, limit, excludeProjects = []) {
      const query: Record<string, unknown> = { status: { $in: [...DEFERRED_STATUSES] } };
      if (projectId !== undefined) query.projectId = projectId;
      else if (excludeProjects.length) query.projectId = { $nin: [...excludeProjects] };
      const docs = (await db.findAsync(query, { _id: 1, projectId: 1, revision: 1, added: 1 }).sort({ added: 1, _id: 1 }).limit(limit)) as unknown as Doc[];
      return docs.map((d) => ({ id: d._id, projectId: d.projectId, revision: d.revision, pendingAdmission: true }));
    },

    async takeReservation(id, revision, chars) {
      return (await conditional({ revision, reservedChars: chars, _id: id }, { $unset: { reservedChars: true } })) !== null;
    },

    startRecrawl: (id, revision, from, now = new Date()) =>
      conditional({ revision, status: from, _id: id }, { $set: { status: "recrawling", recrawlFrom: from, changedAt: now.getTime() } }),

    async endRecrawl(id, revision, now = new Date()) {
      const current = await one({ revision, status: "recrawling", _id: id });
      if (!current) return null;
      return conditional(
        { revision, status: "recrawling", _id: id },
        { $set: { status: current.recrawlFrom ?? "ready", crawledAt: now.getTime(), changedAt: now.getTime() }, $unset: { recrawlFrom: true } },
      );
    },

    recrawled: (id, revision, crawledText, now = new Date()) =>
      conditional(
        { revision, status: "recrawling", _id: id },
        {
          $set: { status: "waiting", admission: "pending", crawledText, crawledAt: now.getTime(), errors: [], types: [], changedAt: now.getTime() },
          $unset: unsetAll(REVISION_SCOPED),
          $inc: { revision: 1 },
        },
      ),

    async findRecrawlCandidates(addedSince, o: FindStaleOptions = {}) {
      const query: Record<string, unknown> = { status: { $nin: ["deleted", "recrawling"] }, added: { $gte: addedSince }, url: { $exists: true } };
      if (o.afterId !== undefined) query._id = { $gt: o.afterId };
      const docs = (await db.findAsync(query, { _id: 1, projectId: 1, revision: 1, added: 1, crawledAt: 1, status: 1 }).sort({ _id: 1 }).limit(o.limit ?? 500)) as unknown as Doc[];
      return docs.map((d) => ({ id: d._id, projectId: d.projectId, revision: d.revision, added: d.added, crawledAt: d.crawledAt, status: d.status }));
    },

    async countByStatus() {
      const counts = await Promise.all(ARTICLE_STATUSES.map((status) => db.countAsync({ status })));
      return Object.fromEntries(ARTICLE_STATUSES.map((s, i) => [s, Number(counts[i])])) as Record<ArticleStatus, number>;
    },

    async close() {
      db.stopAutocompaction();
      if (opts.dataDir) await db.compactDatafileAsync();
    },
  };
}
