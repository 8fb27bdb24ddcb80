// Embedded adapter: two append-only NeDB files under `${dataDir}/auth/`.
// NeDB keeps everything in memory and compacts on load, which suits a few
// projects and tokens; the unique index on hash makes a duplicate token fail.
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { createRequire } from "node:module";
import type * as NedbModule from "@seald-io/nedb";
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

// NeDB's {field: null} does not match a missing field; old documents lack these.
const isNull = (field: string) => ({ $or: [{ [field]: null }, { [field]: { $exists: false } }] });
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

// The package is CommonJS (module.exports = class) while its typings declare
// a default export; loading it with require keeps both sides honest.
const Datastore = createRequire(import.meta.url)("@seald-io/nedb") as typeof NedbModule.default.default;

const isUniqueViolation = (e: unknown) => (e as { errorType?: string })?.errorType === "uniqueViolated";

export async function openNedbAuthStore(dataDir: string): Promise<AuthStore> {
  const dir = join(dataDir, "auth");
  await mkdir(dir, { recursive: true });
  const projects = new Datastore<ProjectDoc>({ filename: join(dir, "projects.db") });
  const tokens = new Datastore<TokenDoc>({ filename: join(dir, "tokens.db") });
  await Promise.all([projects.loadDatabaseAsync(), tokens.loadDatabaseAsync()]);
  await tokens.ensureIndexAsync({ fieldName: "hash", unique: true });
  await tokens.ensureIndexAsync({ fieldName: "projectId" });

  return {
    async createProject(p) {
      const doc: ProjectDoc = { _id: p.id, name: p.name, created: p.created ?? new Date() };
      try {
        return { project: toProject(await projects.insertAsync(doc)), created: true };
      } catch (e) {
        if (!isUniqueViolation(e)) throw e;
        const existing = await projects.findOneAsync({ _id: p.id });
        return { project: toProject(existing as ProjectDoc), created: false };
      }
    },
    async getProject(id) {
      const d = await projects.findOneAsync({ _id: id });
      return d ? toProject(d) : null;
    },
    async listProjects() {
      return (await projects.findAsync({})).map(toProject).sort(byCreatedThenId);
    },
    async countProjects() {
      return projects.countAsync({});
    },
    async insertToken(t) {
      const { id, ...rest } = t;
      try {
        await tokens.insertAsync({ _id: id, ...rest });
      } catch (e) {
        if (isUniqueViolation(e)) throw new DuplicateTokenError();
        throw e;
      }
    },
    async findTokenByHash(hash) {
      const d = await tokens.findOneAsync({ hash });
      return d ? toToken(d) : null;
    },
    async findActiveTokenByHash(hash) {
      const d = await tokens.findOneAsync({ hash, revoked: null });
      return d ? toToken(d) : null;
    },
    async listTokens(projectId) {
      return (await tokens.findAsync({ projectId })).map(toToken).sort(byCreatedThenId);
    },
    async revokeToken(id, at = new Date()) {
      await tokens.updateAsync({ _id: id, revoked: null }, { $set: { revoked: at } }, {});
      const d = await tokens.findOneAsync({ _id: id });
      return d ? toToken(d) : null;
    },
    async getProjectState(id) {
      const d = await projects.findOneAsync({ _id: id });
      return d ? stateOf(d) : null;
    },
    async saveSettings(id, settings, creditChars) {
      const { creditChars: _ignored, ...rest } = settings;
      const $set: Record<string, unknown> = { settings: rest };
      if (creditChars !== undefined) $set.creditChars = creditChars;
      const r = await projects.updateAsync({ _id: id }, { $set }, { returnUpdatedDocs: true });
      const d = r.affectedDocuments as unknown as ProjectDoc | null;
      return r.numAffected === 1 && d ? stateOf(d) : null;
    },
    async addCredit(id, chars) {
      const r = await projects.updateAsync({ _id: id, creditChars: { $gte: 0 } }, { $inc: { creditChars: chars } }, { returnUpdatedDocs: true });
      const d = r.affectedDocuments as unknown as ProjectDoc | null;
      if (r.numAffected === 1 && d) return { ok: true, creditChars: d.creditChars as number };
      return { ok: false, reason: (await projects.findOneAsync({ _id: id })) ? "unlimited" : "not_found" };
    },
    reserve(id, day, chars) {
      return reserveWith(
        {
          read: async (pid) => {
            const d = await projects.findOneAsync({ _id: pid });
            return d ? stateOf(d) : null;
          },
          async resetDay(pid, newDay) {
            await projects.updateAsync(
              { _id: pid, $or: [{ usageDay: { $lt: newDay } }, { usageDay: { $exists: false } }] },
              { $set: { usageDay: newDay, usedToday: 0 } },
              {},
            );
          },
          async take(pid, onDay, n, seen) {
            const conditions: object[] = [{ usageDay: onDay }];
            if (seen.dailyLimit === null) conditions.push(isNull("settings.dailyLimit"));
            else conditions.push({ "settings.dailyLimit": seen.dailyLimit, usedToday: { $lt: seen.dailyLimit } });
            const $inc: Record<string, number> = { usedToday: 1 };
            if (seen.creditChars === null) conditions.push(isNull("creditChars"));
            else {
              conditions.push({ creditChars: { $gte: n } });
              $inc.creditChars = -n;
            }
            const r = await projects.updateAsync({ _id: pid, $and: conditions }, { $inc }, { returnUpdatedDocs: true });
            const d = r.affectedDocuments as unknown as ProjectDoc | null;
            return r.numAffected === 1 && d ? stateOf(d) : null;
          },
        },
        id,
        day,
        chars,
      );
    },
    async refund(id, chars) {
      const r = await projects.updateAsync({ _id: id, creditChars: { $gte: 0 } }, { $inc: { creditChars: chars } }, { returnUpdatedDocs: true });
      const d = r.affectedDocuments as unknown as ProjectDoc | null;
      return r.numAffected === 1 && d ? (d.creditChars as number) : null;
    },
    async close() {
      // Rewrites each file without superseded lines so it does not keep growing.
      await Promise.all([projects.compactDatafileAsync(), tokens.compactDatafileAsync()]);
    },
  };
}
