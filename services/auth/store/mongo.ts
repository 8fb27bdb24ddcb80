// Full-stack adapter: collections auth_projects and auth_tokens. Indexes are
// created at open; createIndexes is a no-op when they already exist, so every
// replica can open the store concurrently.
import type { Db } from "mongodb";
import type { Filter } from "mongodb";
import { byCreatedThenId, DuplicateTokenError, type AuthStore, type ProjectRecord, type ProjectState, type TokenRecord } from "./port.js";
import { reserveWith } from "./reserve.js";

type ProjectDoc = {
  _id: string;
  name: string;
  created: Date;
  settings?: Record<string, unknown> & { dailyLimit?: number | null };
  creditChars?: number | null;
  usageDay?: string;
  usedToday?: number;
};

const stateOf = (d: ProjectDoc): ProjectState => ({
  settings: d.settings,
  creditChars: d.creditChars ?? null,
  dailyLimit: d.settings?.dailyLimit ?? null,
  usageDay: d.usageDay ?? "",
  usedToday: d.usedToday ?? 0,
});
type TokenDoc = Omit<TokenRecord, "id"> & { _id: string };

const toProject = (d: ProjectDoc): ProjectRecord => ({ id: d._id, name: d.name, created: d.created });
const toToken = (d: TokenDoc): TokenRecord => ({
  id: d._id,
  projectId: d.projectId,
  scope: d.scope,
  hash: d.hash,
  prefix: d.prefix,
  created: d.created,
  revoked: d.revoked ?? null,
});

const isDuplicateKey = (e: unknown) => (e as { code?: number })?.code === 11000;

/** The Db comes from lib/mongo.ts; its shared client is closed by the process, not by this store. */
export async function openMongoAuthStore(db: Db): Promise<AuthStore> {
  const projects = db.collection<ProjectDoc>("auth_projects");
  const tokens = db.collection<TokenDoc>("auth_tokens");
  await tokens.createIndexes([
    { key: { hash: 1 }, name: "hash_unique", unique: true },
    { key: { projectId: 1, created: 1 }, name: "project_created" },
  ]);
  await projects.createIndex({ created: 1 }, { name: "created" });

  return {
    async createProject(p) {
      const doc: ProjectDoc = { _id: p.id, name: p.name, created: p.created ?? new Date() };
      // Upsert with $setOnInsert: concurrent creators agree on one document.
      let res;
      try {
        res = await projects.updateOne({ _id: p.id }, { $setOnInsert: { name: doc.name, created: doc.created } }, { upsert: true });
      } catch (e) {
        // Two upserts racing on the same _id: the loser sees a duplicate key.
        if (!isDuplicateKey(e)) throw e;
        res = { upsertedCount: 0 };
      }
      if (res.upsertedCount === 1) return { project: toProject(doc), created: true };
      const existing = await projects.findOne({ _id: p.id });
      return { project: toProject(existing as ProjectDoc), created: false };
    },
    async getProject(id) {
      const d = await projects.findOne({ _id: id });
      return d ? toProject(d) : null;
    },
    async listProjects() {
      return (await projects.find({}).sort({ created: 1, _id: 1 }).toArray()).map(toProject).sort(byCreatedThenId);
    },
    async countProjects() {
      return projects.countDocuments({});
    },
    async insertToken(t) {
      const { id, ...rest } = t;
      try {
        await tokens.insertOne({ _id: id, ...rest });
      } catch (e) {
        if (isDuplicateKey(e)) throw new DuplicateTokenError();
        throw e;
      }
    },
    async findTokenByHash(hash) {
      const d = await tokens.findOne({ hash });
      return d ? toToken(d) : null;
    },
    async findActiveTokenByHash(hash) {
      const d = await tokens.findOne({ hash, revoked: null });
      return d ? toToken(d) : null;
    },
    async listTokens(projectId) {
      return (await tokens.find({ projectId }).sort({ created: 1, _id: 1 }).toArray()).map(toToken);
    },
    async revokeToken(id, at = new Date()) {
      await tokens.updateOne({ _id: id, revoked: null }, { $set: { revoked: at } });
      const d = await tokens.findOne({ _id: id });
      return d ? toToken(d) : null;
    },
    async getProjectState(id) {
      const d = await projects.findOne({ _id: id });
      return d ? stateOf(d) : null;
    },
    async saveSettings(id, settings, creditChars) {
      const { creditChars: _ignored, ...rest } = settings;
      const $set: Partial<ProjectDoc> = { settings: rest };
      if (creditChars !== undefined) $set.creditChars = creditChars;
      const d = await projects.findOneAndUpdate({ _id: id }, { $set }, { returnDocument: "after" });
      return d ? stateOf(d) : null;
    },
    async addCredit(id, chars) {
      const d = await projects.findOneAndUpdate({ _id: id, creditChars: { $gte: 0 } }, { $inc: { creditChars: chars } }, { returnDocument: "after" });
      if (d) return { ok: true, creditChars: d.creditChars as number };
      return { ok: false, reason: (await projects.findOne({ _id: id })) ? "unlimited" : "not_found" };
    },
    reserve(id, day, chars) {
      return reserveWith(
        {
          read: async (pid) => {
            const d = await projects.findOne({ _id: pid });
            return d ? stateOf(d) : null;
          },
          async resetDay(pid, newDay) {
            await projects.updateOne(
              { _id: pid, $or: [{ usageDay: { $lt: newDay } }, { usageDay: { $exists: false } }] },
              { $set: { usageDay: newDay, usedToday: 0 } },
            );
          },
          async take(pid, onDay, n, seen) {
            // {field: null} matches a missing field too in MongoDB.
            const filter: Filter<ProjectDoc> = { _id: pid, usageDay: onDay };
            const $inc: Record<string, number> = { usedToday: 1 };
            if (seen.dailyLimit === null) filter["settings.dailyLimit"] = null;
            else Object.assign(filter, { "settings.dailyLimit": seen.dailyLimit, usedToday: { $lt: seen.dailyLimit } });
            if (seen.creditChars === null) filter.creditChars = null;
            else {
              filter.creditChars = { $gte: n };
              $inc.creditChars = -n;
            }
            const d = await projects.findOneAndUpdate(filter, { $inc }, { returnDocument: "after" });
            return d ? stateOf(d) : null;
          },
        },
        id,
        day,
        chars,
      );
    },
    async refund(id, chars) {
      const d = await projects.findOneAndUpdate({ _id: id, creditChars: { $gte: 0 } }, { $inc: { creditChars: chars } }, { returnDocument: "after" });
      return d ? (d.creditChars as number) : null;
    },
    async close() {},
  };
}
