// MongoDB article store: collection `articles`, one document per article,
// `_id` = article id. Lifecycle writes are single-document conditional
// updates (filter on revision and status), so no transaction is needed.
import { MongoServerError, type Collection, type Db, type Filter, type UpdateFilter } from "mongodb";
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

/** `deleted` mirrors status so listing can use an equality prefix of one index. */
type Doc = Omit<StoredArticle, "id" | "changedAt"> & { _id: string; updatedAt: Date; deleted: boolean };

const toDoc = ({ id, changedAt, ...rest }: StoredArticle): Doc => ({ _id: id, ...rest, updatedAt: new Date(changedAt), deleted: rest.status === "deleted" });

function fromDoc(d: Doc): StoredArticle {
  const { _id, updatedAt, deleted: _deleted, ...rest } = d;
  return { id: _id, ...rest, changedAt: updatedAt.getTime() };
}

function isDuplicateKey(e: unknown): e is MongoServerError {
  return e instanceof MongoServerError && e.code === 11000;
}

/** Which unique index refused the write; older servers and look-alikes only say so in the message. */
function duplicateOn(e: MongoServerError): "id" | "externalId" {
  const pattern = e.keyPattern as Record<string, unknown> | undefined;
  if (pattern) return "externalId" in pattern ? "externalId" : "id";
  return /externalId/.test(e.message) ? "externalId" : "id";
}

// Not admitted (or finished): a job for them is left over from an older decision.
const NOT_CLAIMABLE = ["deleted", "ready", "rejected", "limit_reached", "no_money"] as ArticleStatus[];

export async function openMongoArticleStore(db: Db, collection = "articles"): Promise<ArticleStore> {
  const col: Collection<Doc> = db.collection<Doc>(collection);
  // createIndexes is a no-op for indexes that already exist with the same spec.
  await col.createIndexes([
    { key: { projectId: 1, deleted: 1, added: -1, _id: -1 }, name: "project_listing" },
    // sparse: articles without an externalId never collide; uniqueness spans all projects.
    { key: { externalId: 1 }, name: "externalId_unique", unique: true, sparse: true },
    { key: { projectId: 1, url: 1 }, name: "project_url" },
    { key: { status: 1, updatedAt: 1 }, name: "status_updatedAt" },
  ]);

  const live = { $ne: "deleted" as const };

  const one = async (filter: Filter<Doc>) => {
    const d = await col.findOne(filter);
    return d ? fromDoc(d) : null;
  };

  const conditional = async (filter: Filter<Doc>, update: UpdateFilter<Doc>) => {
    const d = await col.findOneAndUpdate(filter, update, { returnDocument: "after" });
    return d ? fromDoc(d) : null;
  };

  return {
    async insert(a: NewArticle, now = new Date()) {
      const article = initialArticle(a, now);
      try {
        await col.insertOne(toDoc(article));
      } catch (e) {
        if (!isDuplicateKey(e)) throw e;
        if (duplicateOn(e) === "externalId") throw new DuplicateExternalIdError(a.externalId ?? "");
        throw new DuplicateIdError(a.id);
      }
      return article;
    },

    get: (projectId, id) => one({ _id: id, projectId }),
    getByExternalId: (projectId, externalId) => one({ externalId, projectId }),

    async getByUrl(projectId, url) {
      const [d] = await col.find({ projectId, url }).sort({ deleted: 1, added: -1, _id: -1 }).limit(1).toArray();
      return d ? fromDoc(d) : null;
    },

    async list(projectId, limit, offset): Promise<ArticlePage> {
      const filter: Filter<Doc> = { projectId, deleted: false };
      const [count, docs] = await Promise.all([
        col.countDocuments(filter),
        col.find(filter).sort({ added: -1, _id: -1 }).skip(offset).limit(limit).toArray(),
      ]);
      return { count, items: docs.map(fromDoc) };
    },

    async update(projectId, id, expectedRevision, patch: ArticlePatch, now = new Date()): Promise<UpdateOutcome> {
      const { $set, $unset } = patchOps(patch);
      try {
        const updated = await conditional(
          { _id: id, projectId, revision: expectedRevision, deleted: false },
          {
            $set: { ...$set, status: "waiting", errors: [], types: [], updatedAt: now },
            $unset: { ...$unset, ...unsetAll(REVISION_SCOPED), crawledText: true },
            $inc: { revision: 1 },
          } as UpdateFilter<Doc>,
        );
        if (updated) return { ok: true, article: updated };
      } catch (e) {
        if (isDuplicateKey(e)) throw new DuplicateExternalIdError(patch.externalId ?? "");
        throw e;
      }
      const current = await one({ _id: id, projectId });
      if (!current) return { ok: false, reason: "not_found" };
      return { ok: false, reason: current.status === "deleted" ? "deleted" : "revision_changed" };
    },

    async markDeleted(projectId, id, now = new Date()) {
      const changed = await conditional({ _id: id, projectId, deleted: false }, { $set: { status: "deleted", deleted: true, updatedAt: now } });
      return changed ?? one({ _id: id, projectId });
    },

    claim: (id, revision, now = new Date()) =>
      conditional({ _id: id, revision, status: { $nin: NOT_CLAIMABLE } }, { $set: { status: "processing", updatedAt: now } }),

    async reportStatus(id, revision, status, error, now = new Date()) {
      const update: UpdateFilter<Doc> = { $set: { status, updatedAt: now } };
      if (error) update.$push = { errors: { error, date: now.toISOString() } };
      return (await conditional({ _id: id, revision, status: live }, update)) !== null;
    },

    async complete(id, revision, audio: StoredAudio, preview: StoredAudio | undefined, now = new Date()) {
      const $set: Record<string, unknown> = { status: "ready", audio: { key: audio.key, duration: audio.duration }, updated: unixSeconds(now), updatedAt: now };
      const $unset: Record<string, true> = { error: true };
      if (preview) $set.audioPreview = { key: preview.key, duration: preview.duration };
      else $unset.audioPreview = true;
      return (await conditional({ _id: id, revision, status: live }, { $set, $unset } as UpdateFilter<Doc>)) !== null;
    },

    async fail(id, revision, error, now = new Date()) {
      const update: UpdateFilter<Doc> = {
        $set: { status: "errored", error, updated: unixSeconds(now), updatedAt: now },
        $push: { errors: { error, date: now.toISOString() } },
      };
      return (await conditional({ _id: id, revision, status: live }, update)) !== null;
    },

    async findStale(statuses: readonly ArticleStatus[], olderThan: number, o: FindStaleOptions = {}): Promise<StaleArticle[]> {
      const filter: Filter<Doc> = { status: { $in: [...statuses] }, updatedAt: { $lt: new Date(olderThan) } };
      if (o.afterId !== undefined) filter._id = { $gt: o.afterId };
      const docs = await col
        .find(filter, { projection: { _id: 1, projectId: 1, revision: 1, admission: 1 } })
        .sort({ _id: 1 })
        .limit(o.limit ?? 500)
        .toArray();
      return docs.map((d) => ({ id: d._id, projectId: d.projectId, revision: d.revision, ...(d.admission === "pending" ? { pendingAdmission: true } : {}) }));
    },

    getById: (id) => one({ _id: id }),

    claimAdmission: (id, revision, leaseMs, now = new Date()) =>
      conditional(
        { _id: id, revision, admission: "pending", deleted: false, $or: [{ admittingUntil: { $exists: false } }, { admittingUntil: { $lt: now.getTime() } }] },
        { $set: { admittingUntil: now.getTime() + leaseMs } },
      ),

    finishAdmission(id, revision, r: AdmissionResult, now = new Date()) {
      const { $set, $unset } = admissionOps(r);
      return conditional({ _id: id, revision, admission: "pending", deleted: false }, { $set: { ...$set, updatedAt: now }, $unset } as UpdateFilter<Doc>);
    },

    async findDeferred(projectId, limit, excludeProjects = []) {
      const filter: Filter<Doc> = { status: { $in: [...DEFERRED_STATUSES] } };
      if (projectId !== undefined) filter.projectId = projectId;
      else if (excludeProjects.length) filter.projectId = { $nin: [...excludeProjects] };
      const docs = await col.find(filter, { projection: { _id: 1, projectId: 1, revision: 1 } }).sort({ added: 1, _id: 1 }).limit(limit).toArray();
      return docs.map((d) => ({ id: d._id, projectId: d.projectId, revision: d.revision, pendingAdmission: true }));
    },

    async takeReservation(id, revision, chars) {
      return (await conditional({ _id: id, revision, reservedChars: chars }, { $unset: { reservedChars: true } })) !== null;
    },

    startRecrawl: (id, revision, from, now = new Date()) =>
      conditional({ _id: id, revision, status: from }, { $set: { status: "recrawling", recrawlFrom: from, updatedAt: now } }),

    async endRecrawl(id, revision, now = new Date()) {
      const current = await one({ _id: id, revision, status: "recrawling" });
      if (!current) return null;
      return conditional(
        { _id: id, revision, status: "recrawling" },
        { $set: { status: current.recrawlFrom ?? "ready", crawledAt: now.getTime(), updatedAt: now }, $unset: { recrawlFrom: true } },
      );
    },

    recrawled: (id, revision, crawledText, now = new Date()) =>
      conditional({ _id: id, revision, status: "recrawling" }, {
        $set: { status: "waiting", admission: "pending", crawledText, crawledAt: now.getTime(), errors: [], types: [], updatedAt: now },
        $unset: unsetAll(REVISION_SCOPED),
        $inc: { revision: 1 },
      } as UpdateFilter<Doc>),

    async findRecrawlCandidates(addedSince, o: FindStaleOptions = {}) {
      const filter: Filter<Doc> = { deleted: false, status: { $ne: "recrawling" }, added: { $gte: addedSince }, url: { $exists: true } };
      if (o.afterId !== undefined) filter._id = { $gt: o.afterId };
      const docs = await col
        .find(filter, { projection: { _id: 1, projectId: 1, revision: 1, added: 1, crawledAt: 1, status: 1 } })
        .sort({ _id: 1 })
        .limit(o.limit ?? 500)
        .toArray();
      return docs.map((d) => ({ id: d._id, projectId: d.projectId, revision: d.revision, added: d.added, crawledAt: d.crawledAt, status: d.status }));
    },

    // One indexed count per status (status_updatedAt), instead of a $group over every document.
    async countByStatus() {
      const counts = await Promise.all(ARTICLE_STATUSES.map((status) => col.countDocuments({ status })));
      return Object.fromEntries(ARTICLE_STATUSES.map((s, i) => [s, counts[i]])) as Record<ArticleStatus, number>;
    },

    // The connection pool belongs to lib/mongo.ts and is shared; nothing to release here.
    async close() {},
  };
}
