// The AuthStore over three document collections; open.ts picks the driver
// (an SQLite database under DATA_DIR or MongoDB collections auth_projects,
// auth_tokens and auth_oembed_claims).
import { DuplicateKeyError, isNullOrMissing, type DocumentCollection, type Filter } from "../../../lib/store/collection.js";
import { byCreatedThenId, DuplicateTokenError, type AuthStore, type OembedClaim, type PlayerRecord, type ProjectRecord, type ProjectState, type TokenRecord } from "./port.js";
import { reserveManyWith, reserveWith, type ReserveHint, type ReserveOps } from "./reserve.js";

export type ProjectDoc = {
  _id: string;
  name: string;
  created: Date;
  settings?: Record<string, unknown> & { dailyLimit?: number | null };
  creditChars?: number | null;
  usageDay?: string;
  usedToday?: number;
  publicKey?: string;
  player?: Record<string, unknown>;
};
export type TokenDoc = Omit<TokenRecord, "id"> & { _id: string };
/**
 * `verifiedHost` is set (to `host`) only while the claim is verified; its
 * unique sparse index is what lets one project at most hold a verified host,
 * whatever the number of replicas checking at once.
 */
export type OembedClaimDoc = OembedClaim & { _id: string; verifiedHost?: string };

export interface AuthCollections {
  projects: DocumentCollection<ProjectDoc>;
  tokens: DocumentCollection<TokenDoc>;
  oembedClaims: DocumentCollection<OembedClaimDoc>;
}

const claimId = (projectId: string, host: string) => `${projectId}/${host}`;
const toClaim = (d: OembedClaimDoc): OembedClaim => ({
  projectId: d.projectId,
  host: d.host,
  status: d.status,
  reason: d.reason ?? null,
  checkedAt: d.checkedAt ?? null,
  verifiedAt: d.verifiedAt ?? null,
  failingSince: d.failingSince ?? null,
  nextCheckMs: d.nextCheckMs,
});

const stateOf = (d: ProjectDoc): ProjectState => ({
  settings: d.settings,
  creditChars: d.creditChars ?? null,
  dailyLimit: d.settings?.dailyLimit ?? null,
  usageDay: d.usageDay ?? "",
  usedToday: d.usedToday ?? 0,
});

const toProject = (d: ProjectDoc): ProjectRecord => ({ id: d._id, name: d.name, created: d.created });
const toPlayer = (d: ProjectDoc): PlayerRecord => ({ project: toProject(d), publicKey: d.publicKey ?? null, settings: d.player });
const toToken = (d: TokenDoc): TokenRecord => ({
  id: d._id,
  projectId: d.projectId,
  scope: d.scope,
  hash: d.hash,
  prefix: d.prefix,
  created: d.created,
  revoked: d.revoked ?? null,
});

/** Creates the indexes (idempotent, so every replica can open concurrently) and returns the store. */
export async function openAuthStoreOn({ projects, tokens, oembedClaims }: AuthCollections): Promise<AuthStore> {
  await tokens.ensureIndex({ name: "hash_unique", keys: { hash: 1 } }, { unique: true });
  await tokens.ensureIndex({ name: "project_created", keys: { projectId: 1, created: 1 } });
  await projects.ensureIndex({ name: "created", keys: { created: 1 } });
  await projects.ensureIndex({ name: "publicKey_unique", keys: { publicKey: 1 } }, { unique: true, sparse: true });
  await oembedClaims.ensureIndex({ name: "verifiedHost_unique", keys: { verifiedHost: 1 } }, { unique: true, sparse: true });
  await oembedClaims.ensureIndex({ name: "project", keys: { projectId: 1 } });
  await oembedClaims.ensureIndex({ name: "nextCheck", keys: { nextCheckMs: 1 } });

  const state = async (id: string) => {
    const d = await projects.findOne({ _id: id });
    return d ? stateOf(d) : null;
  };
  // Per project, what the last reservation saw, so the next one can try its
  // conditional take without reading first (reserve.ts). Bounded: a hint is
  // only a shortcut.
  const hints = new Map<string, ReserveHint>();
  const remember = (id: string, s: ProjectState | null) => {
    if (!s) return hints.delete(id);
    if (hints.size >= 10_000) hints.clear();
    hints.set(id, { dailyLimit: s.dailyLimit, creditChars: s.creditChars, usageDay: s.usageDay });
  };
  const reserveOps: ReserveOps = {
    async read(pid) {
      const s = await state(pid);
      remember(pid, s);
      return s;
    },
    async resetDay(pid, newDay) {
      await projects.updateOne({ _id: pid, $or: [{ usageDay: { $lt: newDay } }, { usageDay: { $exists: false } }] }, { $set: { usageDay: newDay, usedToday: 0 } });
    },
    async take(pid, onDay, n, seen, count = 1) {
      const conditions: Filter[] = [{ usageDay: onDay }];
      const $inc: Record<string, number> = { usedToday: count };
      if (seen.dailyLimit === null) conditions.push(isNullOrMissing("settings.dailyLimit"));
      else conditions.push({ "settings.dailyLimit": seen.dailyLimit, usedToday: { $lte: seen.dailyLimit - count } });
      if (seen.creditChars === null) conditions.push(isNullOrMissing("creditChars"));
      else {
        conditions.push({ creditChars: { $gte: n } });
        $inc.creditChars = -n;
      }
      const d = await projects.findOneAndUpdate({ _id: pid, $and: conditions }, { $inc });
      const after = d ? stateOf(d) : null;
      if (after) remember(pid, after);
      return after;
    },
  };
  /** Grows a bounded balance only; null when unlimited or no project. */
  const credit = (id: string, chars: number) => projects.findOneAndUpdate({ _id: id, creditChars: { $gte: 0 } }, { $inc: { creditChars: chars } });

  return {
    async createProject(p) {
      const doc: ProjectDoc = { _id: p.id, name: p.name, created: p.created ?? new Date() };
      try {
        await projects.insertOne(doc);
        return { project: toProject(doc), created: true };
      } catch (e) {
        // Concurrent creators agree on one document: the loser reads the winner's.
        if (!(e instanceof DuplicateKeyError)) throw e;
        const existing = await projects.findOne({ _id: p.id });
        return { project: toProject(existing as ProjectDoc), created: false };
      }
    },
    async getProject(id) {
      const d = await projects.findOne({ _id: id });
      return d ? toProject(d) : null;
    },
    async listProjects() {
      return (await projects.find({}, { sort: { created: 1, _id: 1 } })).map(toProject).sort(byCreatedThenId);
    },
    countProjects: () => projects.count({}),
    async insertToken(t) {
      const { id, ...rest } = t;
      try {
        await tokens.insertOne({ _id: id, ...rest });
      } catch (e) {
        if (e instanceof DuplicateKeyError) throw new DuplicateTokenError();
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
      return (await tokens.find({ projectId }, { sort: { created: 1, _id: 1 } })).map(toToken).sort(byCreatedThenId);
    },
    async revokeToken(id, at = new Date()) {
      await tokens.updateOne({ _id: id, revoked: null }, { $set: { revoked: at } });
      const d = await tokens.findOne({ _id: id });
      return d ? toToken(d) : null;
    },
    getProjectState: state,
    async saveSettings(id, settings, creditChars) {
      const { creditChars: _ignored, ...rest } = settings;
      const $set: Record<string, unknown> = { settings: rest };
      if (creditChars !== undefined) $set.creditChars = creditChars;
      const d = await projects.findOneAndUpdate({ _id: id }, { $set });
      return d ? stateOf(d) : null;
    },
    async addCredit(id, chars) {
      const d = await credit(id, chars);
      if (d) return { ok: true, creditChars: d.creditChars as number };
      return { ok: false, reason: (await projects.findOne({ _id: id })) ? "unlimited" : "not_found" };
    },
    reserve(id, day, chars) {
      return reserveWith(reserveOps, id, day, chars, hints.get(id));
    },
    reserveMany(id, day, chars, counted = true) {
      return reserveManyWith(reserveOps, id, day, chars, hints.get(id), counted ? 1 : 0);
    },
    async refund(id, chars) {
      const d = await credit(id, chars);
      return d ? (d.creditChars as number) : null;
    },
    async getPlayer(id) {
      const d = await projects.findOne({ _id: id });
      return d ? toPlayer(d) : null;
    },
    async swapPublicKey(id, expected, next) {
      const current = expected === null ? isNullOrMissing("publicKey") : { publicKey: expected };
      const r = await projects.updateOne({ $and: [current, { _id: id }] }, { $set: { publicKey: next } });
      return r.matched === 1;
    },
    async findPlayerByPublicKey(publicKey) {
      const d = await projects.findOne({ publicKey });
      return d ? toPlayer(d) : null;
    },
    async savePlayerSettings(id, settings) {
      const d = await projects.findOneAndUpdate({ _id: id }, { $set: { player: settings } });
      return d ? toPlayer(d) : null;
    },
    async listOembedClaims(projectId) {
      return (await oembedClaims.find({ projectId }, { sort: { host: 1 } })).map(toClaim);
    },
    async addOembedClaim(projectId, host, nextCheckMs) {
      const doc: OembedClaimDoc = { _id: claimId(projectId, host), projectId, host, status: "pending", reason: null, checkedAt: null, verifiedAt: null, failingSince: null, nextCheckMs };
      try {
        await oembedClaims.insertOne(doc);
      } catch (e) {
        if (!(e instanceof DuplicateKeyError)) throw e;
      }
    },
    async removeOembedClaims(projectId, keep) {
      await oembedClaims.deleteMany({ projectId, host: { $nin: keep } });
    },
    async saveOembedCheck(c) {
      const { projectId, host, ...fields } = c;
      const update = c.status === "verified" ? { $set: { ...fields, verifiedHost: host } } : { $set: fields, $unset: { verifiedHost: true } };
      try {
        const r = await oembedClaims.updateOne({ _id: claimId(projectId, host) }, update);
        return r.matched === 1 ? "saved" : "gone";
      } catch (e) {
        if (e instanceof DuplicateKeyError) return "taken";
        throw e;
      }
    },
    async findVerifiedOembedClaim(host) {
      const d = await oembedClaims.findOne({ verifiedHost: host });
      return d ? toClaim(d) : null;
    },
    async dueOembedClaims(nowMs, limit) {
      return (await oembedClaims.find({ nextCheckMs: { $lte: nowMs } }, { sort: { nextCheckMs: 1 }, limit })).map(toClaim);
    },
    async leaseOembedCheck(projectId, host, seenMs, untilMs) {
      const r = await oembedClaims.updateOne({ _id: claimId(projectId, host), nextCheckMs: seenMs }, { $set: { nextCheckMs: untilMs } });
      return r.matched === 1;
    },
    ...(projects.changes && tokens.changes ? { changes: () => projects.changes!() + tokens.changes!() } : {}),
    async close() {
      await Promise.all([projects.close(), tokens.close(), oembedClaims.close()]);
    },
  };
}
