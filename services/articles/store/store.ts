// The ArticleStore over one document collection; open.ts picks the driver and
// its document layout. Every write touches one document and is conditional
// (revision, status), so it is atomic on either driver without transactions.
import { randomBytes } from "node:crypto";
import { groupCommit } from "../../../lib/group-commit.js";
import type { PronunciationRule } from "../../../lib/pronunciations.js";
import { urlLookupForms } from "../../../lib/urls.js";
import { DuplicateKeyError, type DocumentCollection, type Filter, type TallySpec, type Update } from "../../../lib/store/collection.js";
import { openSqliteCollection } from "../../../lib/store/sqlite-collection.js";
import { dueAt } from "./due.js";
import type { ArticleDoc, ArticleLayout } from "./layout.js";
import { LEGACY_SORT, LIST_SORT } from "./order.js";
import { upgradeOrder } from "./order-upgrade.js";
import { admissionOps, patchOps, unsetAll } from "./patch.js";
import { backfillWords, searchByIndex, searchByWords, SEARCH_BOUNDS, SEARCH_INDEX, wordsField } from "./search.js";
import { logger } from "../../../lib/log.js";
import {
  ARTICLE_STATUSES,
  DEFERRED_STATUSES,
  PENDING_STATUSES,
  DuplicateExternalIdError,
  DuplicateIdError,
  initialArticle,
  REVISION_SCOPED,
  unixSeconds,
  type ArticleStatus,
  type ArticleStore,
  type FindStaleOptions,
  type ListFilter,
  type StaleArticle,
  type StoredArticle,
  type UpdateOutcome,
  LIST_OMITS,
} from "./port.js";

// Not admitted (or finished): a job for them is left over from an older decision.
const NOT_CLAIMABLE: ArticleStatus[] = ["deleted", "ready", "rejected", "limit_reached", "no_money"];
const live = { $ne: "deleted" };
/** A worker holds the revision: claimed and not yet done (a report of retry or fallback keeps it held). */
const IN_HAND = { $in: ["processing", "retry", "fallback"] };
/** Filter form of isParked (port.ts): parked articles wait to be asked for. */
const PARKED_EXCLUDED: Filter = { parked: { $ne: true } };

const stale = (d: ArticleDoc): StaleArticle => ({
  id: d._id,
  projectId: d.projectId,
  revision: d.revision,
  ...(d.admission === "pending" ? { pendingAdmission: true } : {}),
  ...(d.demandedAt !== undefined ? { demanded: true } : {}),
  ...(d.pageFetch === "pending" ? { pendingFetch: true } : {}),
  ...(d.dueAt !== undefined ? { key: d.dueAt } : {}),
});

/**
 * Counts kept by the collection with every write (lib/store/collection.ts), so
 * list totals and the status metric cost one look-up at any archive size.
 */
const LIVE: TallySpec = { name: "live", fields: ["projectId", "status"], groups: (d) => (d.status === "deleted" ? [] : [d.projectId as string]) };
/** A project's ready articles, and per label: `readyGroup(project, label)`. */
const READY: TallySpec = {
  name: "ready",
  fields: ["projectId", "status", "labels"],
  groups: (d) => (d.status === "ready" ? [readyGroup(d.projectId as string), ...((d.labels as string[] | undefined) ?? []).map((l) => readyGroup(d.projectId as string, l))] : []),
};
const BY_STATUS: TallySpec = { name: "status", fields: ["status"], groups: (d) => [d.status as string] };
const readyGroup = (projectId: string, label?: string) => (label === undefined ? projectId : JSON.stringify([projectId, label]));
/**
 * The totals of filtered lists: a project's live articles per label, and per status and per
 * status and label except ready ones, which READY counts already (one copy of each count).
 */
const FILTERED: TallySpec = {
  name: "filtered",
  fields: ["projectId", "status", "labels"],
  groups(d) {
    if (d.status === "deleted") return [];
    const p = d.projectId as string;
    const status = d.status as ArticleStatus;
    const labels = [...new Set((d.labels as string[] | undefined) ?? [])];
    const out = labels.map((l) => filteredGroup(p, undefined, l));
    if (status !== "ready") out.push(filteredGroup(p, status), ...labels.map((l) => filteredGroup(p, status, l)));
    return out;
  },
};
const filteredGroup = (projectId: string, status: ArticleStatus | undefined, label?: string) => JSON.stringify([projectId, status ?? null, label ?? null]);

/** Keyset paging on (key, id) in either direction: the rows after `after` in that order. */
function afterKey(field: string, after: { id: string; key: number } | undefined, dir: 1 | -1): Filter {
  if (!after) return {};
  const [past, beyond] = dir === 1 ? (["$gte", "$gt"] as const) : (["$lte", "$lt"] as const);
  // The range stays on the index; of the few rows tied at the key, the second condition keeps those past the id.
  return { [field]: { [past]: after.key }, $or: [{ [field]: { $ne: after.key } }, { _id: { [beyond]: after.id } }] };
}

/** Runs `fn` once per store (a marker in the rules collection, whose other ids are project ids). */
async function once(rules: DocumentCollection<PronunciationDoc>, name: string, fn: () => Promise<void>): Promise<void> {
  const marker = `\u0000done:${name}`;
  if (await rules.findOne({ _id: marker })) return;
  await fn();
  await rules.upsertOne({ _id: marker }, { $set: { rules: [], changedAt: Date.now() } });
}

/** A project's pronunciation rules: one document per project, keyed by its id. */
export interface PronunciationDoc {
  _id: string;
  rules: PronunciationRule[];
  /** Epoch ms of the last change. */
  changedAt: number;
}

/**
 * Creates the layout's indexes (idempotent) and returns the store.
 * `rulesCol` holds the pronunciation rules; without it they live in memory.
 */
export async function openArticleStoreOn(
  col: DocumentCollection<ArticleDoc>,
  layout: ArticleLayout,
  rulesCol?: DocumentCollection<PronunciationDoc>,
  /** search false: the store as a release before search kept it (no words, no index): the upgrade's bench and tests build archives with it. */
  opts: { search?: boolean } = {},
): Promise<ArticleStore> {
  const rules = rulesCol ?? (await openSqliteCollection<PronunciationDoc>("pronunciations", { what: "pronunciation rules" }));
  let closing = false;
  // An archive of an older release gets its order keys in the background: the store serves meanwhile (order-upgrade.ts).
  const order = await upgradeOrder(col, rules as unknown as Parameters<typeof upgradeOrder>[1], layout, () => closing);
  order.done.catch((e) => logger("articles").warn({ err: e }, "list order: the pass giving older articles their order keys stopped; the next start goes on"));
  const listSort = () => (order.ordered() ? LIST_SORT : LEGACY_SORT);
  for (const t of [LIVE, READY, BY_STATUS, FILTERED]) await col.ensureTally(t);
  await col.settleTallies?.();
  const search = opts.search ?? true;
  const byWords = search && (layout.search === "words" || !col.ensureTextIndex);
  // Articles stored before search existed become searchable in the background: start-up does not wait.
  const searchable = !search ? Promise.resolve() : byWords ? once(rules, "words", () => backfillWords(col)) : (await col.ensureTextIndex!(SEARCH_INDEX)).complete;
  searchable.catch((e) => logger("articles").warn({ err: e }, "search: indexing the articles stored before it stopped; the next start goes on"));
  const { fromDoc, notDeleted, touched } = layout;

  /** The fields a move to `status` at `now` sets and unsets: the change time and the due time that follows (due.ts). */
  const moved = (status: ArticleStatus, now: Date) => {
    const due = dueAt({ status }, now.getTime());
    const $unset: Record<string, true> = due === undefined ? { dueAt: true } : {};
    return { $set: { status, ...touched(now), ...(due === undefined ? {} : { dueAt: due }) }, $unset };
  };

  // Articles an older release left pending have no due time yet: once, from the status index, so bounded by them.
  await once(rules, "dueAt", async () => {
    for (;;) {
      const docs = await col.find({ status: { $in: [...PENDING_STATUSES] }, dueAt: { $exists: false }, ...PARKED_EXCLUDED }, { limit: 500 });
      if (docs.length === 0) return;
      await col.bulkUpdate(docs.map((d) => ({ filter: { _id: d._id, status: d.status, dueAt: { $exists: false } }, update: { $set: { dueAt: fromDoc(d).changedAt } } })));
      if (docs.length < 500) return;
    }
  });

  const one = async (filter: Filter) => {
    const d = await col.findOne(filter);
    return d ? fromDoc(d) : null;
  };
  /** The article after a conditional update, or null when the condition failed. */
  const conditional = async (filter: Filter, update: Update, opts?: { durable?: boolean }) => {
    const d = await col.findOneAndUpdate(filter, update, opts);
    return d ? fromDoc(d) : null;
  };

  /**
   * Admission decisions that arrive together (the creates of one batch) are written with one
   * bulk update and read back with one find: two round trips for the lot instead of one each.
   * Each carries a token of its own (`admissionRun`), so when not all of them matched (an
   * article deleted or edited meanwhile), the read-back tells which ones did.
   */
  const finishGrouped = groupCommit<string, { filter: Filter; $set: Record<string, unknown>; $unset: Update }, StoredArticle | null>(
    async (_, items) => {
      if (items.length === 1) return [await conditional(items[0].filter, { $set: items[0].$set, $unset: items[0].$unset })];
      const runs = items.map(() => randomBytes(6).toString("base64url"));
      const written = await col.bulkUpdate(items.map((it, i) => ({ filter: it.filter, update: { $set: { ...it.$set, admissionRun: runs[i] }, $unset: it.$unset } })));
      const { matched } = written;
      const ids = items.map((it) => it.filter._id as string);
      const docs = new Map((written.docs ?? (await col.find({ _id: { $in: ids } }))).map((d) => [d._id, d]));
      return ids.map((id, i) => {
        const d = docs.get(id);
        if (!d || !(matched === items.length || d.admissionRun === runs[i])) return null;
        // Edited or deleted since it was written: answer the revision as this decision left it,
        // as the one conditional write would have.
        return { ...fromDoc(d), revision: items[i].filter.revision as number, status: items[i].$set.status as ArticleStatus };
      });
    },
    { gatherTurn: true },
  );

  return {
    async insert(a, now = new Date()) {
      const article = initialArticle(a, now);
      try {
        const due = dueAt(article, article.changedAt);
        const doc = layout.toDoc(article);
        await col.insertOne({ ...doc, ...(due === undefined ? {} : { dueAt: due }), ...(byWords ? { words: wordsField(doc) } : {}) });
      } catch (e) {
        if (!(e instanceof DuplicateKeyError)) throw e;
        if (e.field === "externalId") throw new DuplicateExternalIdError(a.externalId ?? "");
        if (e.field === "_id") throw new DuplicateIdError(a.id);
        // Some MongoDB look-alikes do not say which index refused the write:
        // ask the data. The externalId first (unique across projects): it is
        // what a publisher reuses; a clash of random ids is all but impossible.
        if (a.externalId !== undefined && (await col.findOne({ externalId: a.externalId }))) throw new DuplicateExternalIdError(a.externalId);
        if (await col.findOne({ _id: a.id })) throw new DuplicateIdError(a.id);
        throw e;
      }
      return article;
    },

    get: (projectId, id) => one({ projectId, _id: id }),
    getByExternalId: (projectId, externalId) => one({ projectId, externalId }),

    async getByUrl(projectId, url) {
      const forms = urlLookupForms(url);
      // Few articles share a URL: newest first, then a live one wins over a deleted one.
      const docs = await col.find({ projectId, url: forms.length === 1 ? forms[0] : { $in: forms } }, { sort: { added: -1, _id: -1 } });
      const d = docs.find((x) => x.status !== "deleted") ?? docs[0];
      return d ? fromDoc(d) : null;
    },

    async titles(projectId, ids) {
      if (ids.length === 0) return new Map();
      const docs = await col.find({ projectId, _id: { $in: [...ids] } }, { projection: { _id: 1, title: 1 } });
      return new Map(docs.map((d) => [d._id, d.title]));
    },

    async list(projectId, limit, offset, { status, label, words, searchBounds = SEARCH_BOUNDS }: ListFilter = {}) {
      if (status === "deleted") return { count: 0, items: [] };
      if (words?.length) {
        const filter: Filter = { projectId, ...notDeleted };
        if (status !== undefined) filter.status = status;
        if (label !== undefined) filter.labels = label;
        const { count, capped, docs } = await (byWords ? searchByWords : searchByIndex)(col, filter, words, limit, offset, searchBounds);
        return { count, items: docs.map(fromDoc), ...(capped ? { countCapped: true } : {}) };
      }
      const counted =
        status === undefined && label === undefined
          ? col.tally(LIVE.name, projectId)
          : status === "ready"
            ? col.tally(READY.name, readyGroup(projectId, label))
            : col.tally(FILTERED.name, filteredGroup(projectId, status, label));
      // A status other than deleted implies a live article: the filter is then the prefix of
      // project_ready(_label) as it stands; a label alone goes with the listing's deleted flag.
      const filter: Filter = status === undefined ? { projectId, ...notDeleted } : { projectId, status };
      if (label !== undefined) filter.labels = label;
      const [count, docs] = await Promise.all([counted, col.find(filter, { sort: listSort(), skip: offset, limit, omit: [...LIST_OMITS] })]);
      return { count, items: docs.map(fromDoc) };
    },

    async listReady(projectId, { label, limit, offset }) {
      const filter: Filter = label === undefined ? { projectId, status: "ready" } : { projectId, status: "ready", labels: label };
      const [count, docs] = await Promise.all([col.tally(READY.name, readyGroup(projectId, label)), col.find(filter, { sort: listSort(), skip: offset, limit })]);
      return { count, items: docs.map(fromDoc) };
    },

    async update(projectId, id, expectedRevision, patch, now = new Date()): Promise<UpdateOutcome> {
      // A removed publication date lists the article by its creation again, which its sequence holds.
      const before = patch.published === null ? await one({ projectId, _id: id }) : null;
      const { $set, $unset } = patchOps(patch, before ?? { added: 0, seq: 0 });
      const to = moved("waiting", now);
      if (byWords && (patch.title !== undefined || patch.text !== undefined || patch.parse !== undefined)) {
        // The words come from title and text together: the fields the patch keeps are read (the write stays conditional on the revision read against).
        const current = await col.findOne({ projectId, _id: id, revision: expectedRevision });
        if (current) $set.words = wordsField({ ...current, ...$set });
      }
      try {
        const updated = await conditional(
          { projectId, revision: expectedRevision, ...notDeleted, _id: id },
          {
            $set: { ...$set, errors: [], types: [], ...to.$set },
            // A parked article updated is an immediate one from now on.
            $unset: { ...$unset, ...unsetAll(REVISION_SCOPED), crawledText: true, ...to.$unset, parked: true },
            $inc: { revision: 1 },
          },
        );
        if (updated) return { ok: true, article: updated };
      } catch (e) {
        if (e instanceof DuplicateKeyError) throw new DuplicateExternalIdError(patch.externalId ?? "");
        throw e;
      }
      const current = await one({ projectId, _id: id });
      if (!current) return { ok: false, reason: "not_found" };
      return { ok: false, reason: current.status === "deleted" ? "deleted" : "revision_changed" };
    },

    async relabel(projectId, id, expectedRevision, labels, now = new Date()): Promise<UpdateOutcome> {
      const updated = await conditional({ projectId, revision: expectedRevision, ...notDeleted, _id: id }, { $set: { labels: [...labels], ...touched(now) } });
      if (updated) return { ok: true, article: updated };
      const current = await one({ projectId, _id: id });
      if (!current) return { ok: false, reason: "not_found" };
      return { ok: false, reason: current.status === "deleted" ? "deleted" : "revision_changed" };
    },

    async markDeleted(projectId, id, now = new Date()) {
      // The files are taken down (audio-files.ts): no URL to them is handed out any more.
      const to = moved("deleted", now);
      const changed = await conditional({ projectId, ...notDeleted, _id: id }, { $set: { ...to.$set, ...layout.deletedFields }, $unset: { audio: true, audioPreview: true, transcript: true, ...(byWords ? { words: true } : {}), ...to.$unset } });
      return changed ?? one({ projectId, _id: id });
    },

    unpark: (projectId, id, admittingUntil, now = new Date()) =>
      conditional(
        // Not while its page is being read: it has no text to speak yet.
        { projectId, parked: true, ...notDeleted, pageFetch: { $exists: false }, _id: id },
        // Asked for: from now on due like any pending article, should its admission stall.
        { $set: { admission: "pending", admittingUntil, demandedAt: now.getTime(), ...moved("waiting", now).$set }, $unset: { parked: true } },
      ),

    claim: (id, revision, now = new Date()) => conditional({ revision, status: { $nin: NOT_CLAIMABLE }, _id: id }, moved("processing", now)),

    async reportStatus(id, revision, status, error, now = new Date()) {
      const update: Update = moved(status, now);
      if (error) update.$push = { errors: { error, date: now.toISOString() } };
      return conditional({ revision, status: live, _id: id }, update);
    },

    keepDue: (id, revision, now = new Date()) =>
      conditional({ revision, status: IN_HAND, dueAt: { $exists: true }, _id: id }, { $set: { dueAt: now.getTime() } }),

    reportPreview: (id, revision, preview, now = new Date()) =>
      conditional({ revision, status: IN_HAND, _id: id }, { $set: { audioPreview: { key: preview.key, duration: preview.duration }, ...touched(now) } }),

    async complete(id, revision, { audio, preview, transcript }, now = new Date()) {
      const to = moved("ready", now);
      const $set: Record<string, unknown> = { ...to.$set, audio: { key: audio.key, duration: audio.duration }, updated: unixSeconds(now) };
      const $unset: Record<string, true> = { error: true, ...to.$unset };
      if (preview) $set.audioPreview = { key: preview.key, duration: preview.duration };
      else $unset.audioPreview = true;
      // A re-render of the revision by an older worker stores no transcript: none may be claimed for it.
      if (transcript) $set.transcript = { chapters: transcript.chapters };
      else $unset.transcript = true;
      return conditional({ revision, status: live, _id: id }, { $set, $unset });
    },

    async fail(id, revision, error, now = new Date()) {
      const to = moved("errored", now);
      const update = {
        $set: { ...to.$set, error, updated: unixSeconds(now) },
        $unset: to.$unset,
        $push: { errors: { error, date: now.toISOString() } },
      };
      return conditional({ revision, status: live, _id: id }, update);
    },

    async findStale(statuses, olderThan, o: FindStaleOptions = {}) {
      // Only due articles carry dueAt (due.ts; never a parked one): the range reads them and nothing else.
      const from = afterKey("dueAt", o.after, 1);
      const filter: Filter = { ...from, dueAt: { ...(from.dueAt as object | undefined), $lt: olderThan }, status: { $in: [...statuses] } };
      // The status index matches the filter too, and would walk every waiting article, parked ones included.
      const docs = await col.find(filter, { projection: { _id: 1, projectId: 1, revision: 1, admission: 1, dueAt: 1, demandedAt: 1, pageFetch: 1 }, sort: { dueAt: 1, _id: 1 }, limit: o.limit ?? 500, hint: "due" });
      return docs.map(stale);
    },

    getById: (id) => one({ _id: id }),

    // The lease need not survive a power failure (it would expire anyway), so it does not wait for fsync.
    claimAdmission: (id, revision, leaseMs, now = new Date()) =>
      conditional(
        { revision, admission: "pending", ...notDeleted, ...PARKED_EXCLUDED, $or: [{ admittingUntil: { $exists: false } }, { admittingUntil: { $lt: now.getTime() } }], _id: id },
        { $set: { admittingUntil: now.getTime() + leaseMs } },
        { durable: false },
      ),

    finishAdmission(id, revision, r, now = new Date()) {
      const { $set, $unset } = admissionOps(r);
      const to = moved(r.status, now);
      return finishGrouped("", { filter: { revision, admission: "pending", ...notDeleted, _id: id }, $set: { ...$set, ...to.$set }, $unset: { ...$unset, ...to.$unset } });
    },

    async findDeferred(projectId, limit, excludeProjects = []) {
      const filter: Filter = { status: { $in: [...DEFERRED_STATUSES] } };
      if (projectId !== undefined) filter.projectId = projectId;
      else if (excludeProjects.length) filter.projectId = { $nin: [...excludeProjects] };
      const docs = await col.find(filter, { projection: { _id: 1, projectId: 1, revision: 1, added: 1 }, sort: { added: 1, _id: 1 }, limit });
      return docs.map((d) => ({ id: d._id, projectId: d.projectId, revision: d.revision, pendingAdmission: true }));
    },

    async takeReservation(id, revision, chars) {
      return (await conditional({ revision, reservedChars: chars, _id: id }, { $unset: { reservedChars: true } })) !== null;
    },

    // Not a parked article: a recrawl would make its new revision due, and nobody asked for its audio.
    startRecrawl(id, revision, from, now = new Date()) {
      const to = moved("recrawling", now);
      return conditional({ revision, status: from, ...PARKED_EXCLUDED, _id: id }, { $set: { ...to.$set, recrawlFrom: from }, $unset: to.$unset });
    },

    async endRecrawl(id, revision, now = new Date()) {
      const current = await one({ revision, status: "recrawling", _id: id });
      if (!current) return null;
      return conditional(
        { revision, status: "recrawling", _id: id },
        (({ $set, $unset }) => ({ $set: { ...$set, crawledAt: now.getTime() }, $unset: { ...$unset, recrawlFrom: true } }))(moved(current.recrawlFrom ?? "ready", now)),
      );
    },

    recrawled(id, revision, crawledText, now = new Date()) {
      const to = moved("waiting", now);
      return conditional(
        { revision, status: "recrawling", _id: id },
        {
          $set: { ...to.$set, admission: "pending", crawledText, crawledAt: now.getTime(), errors: [], types: [] },
          $unset: { ...unsetAll(REVISION_SCOPED), ...to.$unset },
          $inc: { revision: 1 },
        },
      );
    },

    async pageFetched(id, revision, fill, now = new Date()) {
      const { url, ...fields } = fill;
      // The page's title and text are what search finds it by from now on.
      const $set = { ...fields, ...(url === undefined ? {} : { url }), crawledAt: now.getTime(), ...(byWords ? { words: wordsField({ ...fill, parse: false }) } : {}) };
      const $unset = { pageFetch: true as const, pageKeeps: true as const };
      const to = moved("parsed", now);
      const filled = await conditional({ revision, status: "recrawling", pageFetch: "pending", ...PARKED_EXCLUDED, _id: id }, { $set: { ...$set, ...to.$set, admission: "pending" }, $unset: { ...$unset, ...to.$unset } });
      if (filled) return filled;
      // Audio on demand: parsed and parked, neither admitted nor due until someone asks for its audio.
      return conditional({ revision, status: "recrawling", pageFetch: "pending", parked: true, _id: id }, { $set: { ...$set, status: "parsed", ...touched(now) }, $unset: { ...$unset, dueAt: true } });
    },

    pageFetchFailed(id, revision, error, now = new Date()) {
      const to = moved("errored", now);
      return conditional(
        { revision, status: "recrawling", pageFetch: "pending", _id: id },
        { $set: { ...to.$set, error, updated: unixSeconds(now) }, $unset: { ...to.$unset, pageFetch: true, pageKeeps: true }, $push: { errors: { error, date: now.toISOString() } } },
      );
    },

    async findRecrawlCandidates(projectId, addedSince, o: FindStaleOptions = {}) {
      // The project's listing index, newest first, down to the start of its recrawl window.
      const from = afterKey("added", o.after, -1);
      const filter: Filter = { projectId, ...notDeleted, ...from, added: { ...(from.added as object | undefined), $gte: addedSince }, url: { $exists: true } };
      const docs = await col.find(filter, {
        projection: { _id: 1, projectId: 1, revision: 1, added: 1, crawledAt: 1, status: 1 },
        sort: { added: -1, _id: -1 },
        limit: o.limit ?? 500,
      });
      return docs.map((d) => ({ id: d._id, projectId: d.projectId, revision: d.revision, added: d.added, key: d.added, crawledAt: d.crawledAt, status: d.status }));
    },

    async countByStatus() {
      const counts = await col.tallies(BY_STATUS.name);
      return Object.fromEntries(ARTICLE_STATUSES.map((s) => [s, counts.get(s) ?? 0])) as Record<ArticleStatus, number>;
    },

    recount: async () => {
      await col.recount?.();
    },

    async getPronunciations(projectId) {
      const d = await rules.findOne({ _id: projectId });
      return d ? d.rules.map((r) => ({ ...r })) : [];
    },

    async setPronunciations(projectId, list, now = new Date()) {
      if (list.length === 0) {
        await rules.deleteMany({ _id: projectId });
        return;
      }
      // One document per project, replaced whole: readers see the old list or the new one.
      const doc = { rules: list.map((r) => ({ ...r })), changedAt: now.getTime() };
      const updated = await rules.updateOne({ _id: projectId }, { $set: doc });
      if (updated.matched > 0) return;
      try {
        await rules.insertOne({ _id: projectId, ...doc });
      } catch (e) {
        // A concurrent first write won the insert: ours replaces it, as a later write should.
        if (!(e instanceof DuplicateKeyError)) throw e;
        await rules.updateOne({ _id: projectId }, { $set: doc });
      }
    },

    searchComplete: () => searchable,
    ...(col.changes ? { changes: () => col.changes!() } : {}),
    ...(col.rewrites ? { rewrites: () => col.rewrites!() } : {}),
    close: async () => {
      closing = true;
      await order.done.catch(() => undefined);
      await col.close();
      await rules.close();
    },
  };
}
