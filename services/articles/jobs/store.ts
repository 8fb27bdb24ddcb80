// The bulk-job store, written once over the document-collection port (runs on
// SQLite and MongoDB alike). Progress lives in one small document per job; the
// ids a job works through sit in documents of their own, TARGET_CHUNK ids each,
// so recording an article's outcome never rewrites ten thousand ids.
import { DuplicateKeyError, type DocumentCollection } from "../../../lib/store/collection.js";
import { MAX_KEPT_ERRORS, JobRunningError, type BulkJob, type JobStore, type NewJob } from "./port.js";

/**
 * `running`: the project's id while the job runs (a unique index: one running job per project);
 * `owner` and `leaseUntil`: the runner holding it. None of them leave the store.
 */
export type JobDoc = Omit<BulkJob, "id"> & { _id: string; running?: string; owner?: string; leaseUntil?: number };
export type TargetDoc = { _id: string; jobId: string; ids: string[] };

export const TARGET_CHUNK = 1000;

/** Finished jobs stay readable this long; older ones of the project go when it starts another. */
export const FINISHED_KEPT_MS = 7 * 86_400_000;

const chunkId = (jobId: string, n: number) => `${jobId}.${n}`;

function fromDoc({ _id, running: _r, owner: _o, leaseUntil: _l, ...rest }: JobDoc): BulkJob {
  return { id: _id, ...rest };
}

export async function openJobStoreOn(jobs: DocumentCollection<JobDoc>, targets: DocumentCollection<TargetDoc>): Promise<JobStore> {
  await jobs.ensureIndex({ name: "project_running", keys: { running: 1 } }, { unique: true, sparse: true });
  await jobs.ensureIndex({ name: "state_lease", keys: { state: 1, leaseUntil: 1 } });
  await jobs.ensureIndex({ name: "project_finished", keys: { projectId: 1, finishedAt: 1 } });
  await targets.ensureIndex({ name: "job", keys: { jobId: 1 } });

  const held = (id: string, owner: string) => ({ _id: id, owner, state: "running" });
  const ended = { running: true, owner: true, leaseUntil: true } as const;

  async function dropOld(projectId: string, now: number): Promise<void> {
    const old = await jobs.find({ projectId, finishedAt: { $lt: now - FINISHED_KEPT_MS } }, { projection: { _id: 1 }, limit: 100 });
    if (old.length === 0) return;
    const ids = old.map((d) => d._id);
    await targets.deleteMany({ jobId: { $in: ids } });
    await jobs.deleteMany({ _id: { $in: ids } });
  }

  return {
    async create(job: NewJob, ids, owner, leaseUntil, now = new Date()) {
      const other = await jobs.findOne({ running: job.projectId });
      if (other) throw new JobRunningError(other._id);
      await dropOld(job.projectId, now.getTime());
      // The ids first: a job is never seen running without them.
      for (let n = 0; n * TARGET_CHUNK < ids.length; n++) {
        await targets.insertOne({ _id: chunkId(job.id, n), jobId: job.id, ids: ids.slice(n * TARGET_CHUNK, (n + 1) * TARGET_CHUNK) });
      }
      const doc: JobDoc = {
        _id: job.id,
        projectId: job.projectId,
        action: job.action,
        labels: [...job.labels],
        state: "running",
        total: ids.length,
        done: 0,
        failed: 0,
        errors: [],
        createdAt: now.getTime(),
        running: job.projectId,
        owner,
        leaseUntil,
      };
      try {
        await jobs.insertOne(doc);
      } catch (e) {
        await targets.deleteMany({ jobId: job.id });
        // Another start of the same project won the race between the check above and this insert.
        if (e instanceof DuplicateKeyError) throw new JobRunningError((await jobs.findOne({ running: job.projectId }))?._id);
        throw e;
      }
      return fromDoc(doc);
    },

    async get(projectId, id) {
      const d = await jobs.findOne({ _id: id, projectId });
      return d ? fromDoc(d) : null;
    },

    async running(projectId) {
      const d = await jobs.findOne({ running: projectId });
      return d ? fromDoc(d) : null;
    },

    async targets(id, from, count) {
      const out: string[] = [];
      let pos = from;
      while (out.length < count) {
        const chunk = await targets.findOne({ _id: chunkId(id, Math.floor(pos / TARGET_CHUNK)) });
        if (!chunk) break;
        const part = chunk.ids.slice(pos % TARGET_CHUNK, (pos % TARGET_CHUNK) + count - out.length);
        if (part.length === 0) break;
        out.push(...part);
        pos += part.length;
      }
      return out;
    },

    async lapsed(now, limit) {
      const docs = await jobs.find({ state: "running", leaseUntil: { $lt: now } }, { sort: { state: 1, leaseUntil: 1 }, limit });
      return docs.map(fromDoc);
    },

    async claim(id, owner, leaseUntil, now) {
      const d = await jobs.findOneAndUpdate({ _id: id, state: "running", leaseUntil: { $lt: now } }, { $set: { owner, leaseUntil } });
      return d ? fromDoc(d) : null;
    },

    async step(id, owner, outcome, leaseUntil) {
      if (!outcome) {
        // A heartbeat: harmless to lose in a power failure (the lease would lapse anyway).
        const d = await jobs.findOneAndUpdate(held(id, owner), { $set: { leaseUntil } }, { durable: false });
        return d ? fromDoc(d) : null;
      }
      if (outcome.ok) {
        const d = await jobs.findOneAndUpdate(held(id, owner), { $inc: { done: 1 }, $set: { leaseUntil } });
        return d ? fromDoc(d) : null;
      }
      // The kept errors stop growing at the cap; the count goes on. Only the holder writes, so the read stays true.
      const current = await jobs.findOne(held(id, owner));
      if (!current) return null;
      const push = current.errors.length < MAX_KEPT_ERRORS ? { $push: { errors: { ...outcome.error } } } : {};
      const d = await jobs.findOneAndUpdate(held(id, owner), { $inc: { failed: 1 }, ...push, $set: { leaseUntil } });
      return d ? fromDoc(d) : null;
    },

    async finish(id, owner, state, reason, now = new Date()) {
      const d = await jobs.findOneAndUpdate(held(id, owner), { $set: { state, finishedAt: now.getTime(), ...(reason ? { reason } : {}) }, $unset: ended });
      if (d) await targets.deleteMany({ jobId: id });
      return d ? fromDoc(d) : null;
    },

    async release(id, owner) {
      await jobs.updateOne(held(id, owner), { $set: { leaseUntil: 0 } });
    },

    async cancel(projectId, id, reason, now = new Date()) {
      const d = await jobs.findOneAndUpdate({ _id: id, projectId, state: "running" }, { $set: { state: "cancelled", finishedAt: now.getTime(), reason }, $unset: ended });
      if (d) {
        await targets.deleteMany({ jobId: id });
        return fromDoc(d);
      }
      const after = await jobs.findOne({ _id: id, projectId });
      return after ? fromDoc(after) : null;
    },

    async close() {
      await jobs.close();
      await targets.close();
    },
  };
}
