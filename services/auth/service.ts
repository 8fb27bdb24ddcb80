// The AuthService implementation. Publisher tokens are resolved by hash; the
// admin RPCs need ADMIN_TOKEN and never accept a publisher token. No error
// message ever contains a token.
import { Code, ConnectError, type ServiceImpl } from "@connectrpc/connect";
import { create } from "@bufbuild/protobuf";
import {
  AuthService,
  ProjectSchema,
  ProjectSettingsSchema,
  ReservationOutcome,
  Scope,
  TokenInfoSchema,
  type Project,
  type ProjectSettings as ProjectSettingsMessage,
  type TokenInfo,
} from "../../gen/auth/v1/auth_pb.js";
import type { Logger } from "../../lib/log.js";
import { createCredentialChecks, MAX_TOKEN_LENGTH } from "./credentials.js";
import { applySettingsPatch, checkWebhookTarget, normalizeStored, redacted, SettingsError, type WebhookTargetOptions } from "./settings.js";
import { DuplicateTokenError, type AuthStore, type ProjectRecord, type ReserveOutcome, type ProjectState, type TokenRecord, type TokenScope } from "./store/port.js";
import { hashToken, newPlainToken, newProjectId, PROJECT_ID_PATTERN, sameHash, tokenRecord } from "./tokens.js";

const MAX_NAME_LENGTH = 200;
const TOKEN_ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

export interface AuthServiceOptions {
  store: AuthStore;
  /** Unset disables every admin RPC. */
  adminToken?: string;
  /** Service-to-service token: unlocks the settings read (with secrets) and reservations. Unset disables them. */
  internalToken?: string;
  log: Logger;
  /** Private webhook receivers settings:set accepts (FETCH_ALLOW_PRIVATE). */
  webhookTargets?: WebhookTargetOptions;
}

/** Characters per call: far beyond any article, small enough to stay exact in a double. */
const MAX_CHARS = 1_000_000_000_000;
const DAY_PATTERN = /^\d{4}-\d{2}-\d{2}$/;
const MAX_RESERVATIONS = 256;

function checkDay(day: string): void {
  if (!DAY_PATTERN.test(day)) throw new ConnectError("day: expected YYYY-MM-DD (UTC)", Code.InvalidArgument);
}

function reservationAnswer(projectId: string, r: ReserveOutcome) {
  if (!r.ok && r.reason === "not_found") throw new ConnectError(`project '${projectId}' not found`, Code.NotFound);
  const outcome = r.ok ? ReservationOutcome.RESERVED : r.reason === "limit_reached" ? ReservationOutcome.LIMIT_REACHED : ReservationOutcome.NO_MONEY;
  return { outcome, creditChars: r.creditChars === null ? undefined : BigInt(r.creditChars), usedToday: BigInt(r.usedToday) };
}

const unixSeconds = (d: Date | null) => (d ? BigInt(Math.floor(d.getTime() / 1000)) : 0n);

export const scopeToProto = (s: TokenScope) => (s === "full" ? Scope.FULL : Scope.READ);

function scopeFromProto(s: Scope): TokenScope {
  if (s === Scope.FULL) return "full";
  if (s === Scope.READ) return "read";
  throw new ConnectError("scope: must be SCOPE_FULL or SCOPE_READ", Code.InvalidArgument);
}

const projectMessage = (p: ProjectRecord): Project => create(ProjectSchema, { id: p.id, name: p.name, created: unixSeconds(p.created) });

export const tokenInfoMessage = (t: TokenRecord): TokenInfo =>
  create(TokenInfoSchema, {
    id: t.id,
    projectId: t.projectId,
    scope: scopeToProto(t.scope),
    created: unixSeconds(t.created),
    revoked: unixSeconds(t.revoked),
    prefix: t.prefix,
  });

function checkProjectId(value: string, field = "project_id"): string {
  if (!PROJECT_ID_PATTERN.test(value)) {
    throw new ConnectError(`${field}: must be 1-64 characters of A-Z, a-z, 0-9, '_' or '-'`, Code.InvalidArgument);
  }
  return value;
}

export function createAuthServiceImpl(opts: AuthServiceOptions): ServiceImpl<typeof AuthService> {
  const { store, log } = opts;
  const { isInternal, requireInternalToken, requireAdmin } = createCredentialChecks(opts);

  function settingsMessage(projectId: string, st: ProjectState, withSecrets: boolean): ProjectSettingsMessage {
    const full = normalizeStored(st.settings, st.creditChars);
    return create(ProjectSettingsSchema, {
      projectId,
      settingsJson: JSON.stringify(withSecrets ? full : redacted(full)),
      creditChars: st.creditChars === null ? undefined : BigInt(st.creditChars),
      usageDay: st.usageDay,
      usedToday: BigInt(st.usedToday),
    });
  }

  async function stateOf(projectId: string): Promise<ProjectState> {
    const st = await store.getProjectState(checkProjectId(projectId));
    if (!st) throw new ConnectError(`project '${projectId}' not found`, Code.NotFound);
    return st;
  }

  function charsOf(value: bigint, min: number): number {
    if (value < BigInt(min) || value > BigInt(MAX_CHARS)) throw new ConnectError(`chars: must be between ${min} and ${MAX_CHARS}`, Code.InvalidArgument);
    return Number(value);
  }

  async function requireProject(id: string): Promise<ProjectRecord> {
    const p = await store.getProject(checkProjectId(id));
    if (!p) throw new ConnectError(`project '${id}' not found`, Code.NotFound);
    return p;
  }

  return {
    async authenticate(req, ctx) {
      // An oracle for "is this token valid?" is for the services that check callers, not for anyone on the port.
      requireInternalToken(ctx);
      const token = req.token;
      if (!token) throw new ConnectError("missing API token: send 'Authorization: Bearer <API_TOKEN>'", Code.Unauthenticated);
      if (token.length > MAX_TOKEN_LENGTH) throw new ConnectError("unknown API token", Code.Unauthenticated);
      const hash = hashToken(token);
      const found = await store.findTokenByHash(hash);
      // The lookup is by hash already; the explicit constant-time compare keeps
      // a store that matched loosely (or a future prefix lookup) from deciding.
      if (!found || !sameHash(found.hash, hash)) {
        throw new ConnectError("unknown API token: check it was copied whole, or ask your project admin for a new one", Code.Unauthenticated);
      }
      if (found.revoked) throw new ConnectError("this API token has been revoked; ask your project admin for a new one", Code.Unauthenticated);
      return { projectId: found.projectId, scope: scopeToProto(found.scope), tokenId: found.id };
    },

    async createProject(req, ctx) {
      await requireAdmin(ctx);
      const id = req.id === "" ? newProjectId() : checkProjectId(req.id, "id");
      const name = req.name.trim() || id;
      if (name.length > MAX_NAME_LENGTH) throw new ConnectError(`name: at most ${MAX_NAME_LENGTH} characters`, Code.InvalidArgument);
      const res = await store.createProject({ id, name });
      if (!res.created) throw new ConnectError(`project '${id}' already exists`, Code.AlreadyExists);
      log.info({ projectId: id }, "project created");
      return { project: projectMessage(res.project) };
    },

    async listProjects(_req, ctx) {
      // The articles service's periodic recrawl asks which projects there are (ids and names only).
      if (!isInternal(ctx)) await requireAdmin(ctx);
      return { projects: (await store.listProjects()).map(projectMessage) };
    },

    async issueToken(req, ctx) {
      await requireAdmin(ctx);
      checkProjectId(req.projectId);
      const scope = scopeFromProto(req.scope);
      await requireProject(req.projectId);
      for (let attempt = 0; ; attempt++) {
        const token = newPlainToken();
        const rec = tokenRecord(token, req.projectId, scope);
        try {
          await store.insertToken(rec);
        } catch (e) {
          // 256 random bits do not collide; a retry only guards a broken RNG.
          if (e instanceof DuplicateTokenError && attempt < 2) continue;
          throw e;
        }
        log.info({ projectId: rec.projectId, tokenId: rec.id, scope }, "token issued");
        return { token, info: tokenInfoMessage(rec) };
      }
    },

    async listTokens(req, ctx) {
      await requireAdmin(ctx);
      await requireProject(req.projectId);
      return { tokens: (await store.listTokens(req.projectId)).map(tokenInfoMessage) };
    },

    async revokeToken(req, ctx) {
      await requireAdmin(ctx);
      if (!TOKEN_ID_PATTERN.test(req.tokenId)) {
        throw new ConnectError("token_id: expected a token id such as 'tok_…' (see ListTokens), not the token itself", Code.InvalidArgument);
      }
      const rec = await store.revokeToken(req.tokenId);
      if (!rec) throw new ConnectError(`token '${req.tokenId}' not found`, Code.NotFound);
      log.info({ projectId: rec.projectId, tokenId: rec.id }, "token revoked");
      return {};
    },

    async getProjectSettings(req, ctx) {
      const internal = isInternal(ctx);
      if (!internal) await requireAdmin(ctx);
      return { settings: settingsMessage(req.projectId, await stateOf(req.projectId), internal) };
    },

    async updateProjectSettings(req, ctx) {
      await requireAdmin(ctx);
      const current = await stateOf(req.projectId);
      let next;
      try {
        const before = normalizeStored(current.settings, current.creditChars);
        next = applySettingsPatch(before, req.patchJson);
        await checkWebhookTarget(next, before, opts.webhookTargets);
      } catch (e) {
        if (e instanceof SettingsError) throw new ConnectError(e.message, Code.InvalidArgument);
        throw e;
      }
      // The balance is replaced only when the patch names it; otherwise concurrent debits would be undone.
      const touchesCredit = Object.hasOwn(JSON.parse(req.patchJson) as object, "creditChars");
      const saved = await store.saveSettings(req.projectId, { ...next }, touchesCredit ? next.creditChars : undefined);
      if (!saved) throw new ConnectError(`project '${req.projectId}' not found`, Code.NotFound);
      log.info({ projectId: req.projectId, dailyLimit: next.dailyLimit, creditChars: saved.creditChars, webhook: next.webhook !== null }, "project settings changed");
      return { settings: settingsMessage(req.projectId, saved, false) };
    },

    async addCredit(req, ctx) {
      await requireAdmin(ctx);
      checkProjectId(req.projectId);
      const chars = charsOf(req.chars, 1);
      const r = await store.addCredit(req.projectId, chars);
      if (!r.ok && r.reason === "not_found") throw new ConnectError(`project '${req.projectId}' not found`, Code.NotFound);
      if (!r.ok) {
        throw new ConnectError(`project '${req.projectId}' has unlimited credit; set creditChars in its settings to bound it first`, Code.FailedPrecondition);
      }
      log.info({ projectId: req.projectId, added: chars, creditChars: r.creditChars }, "credit added");
      return { creditChars: BigInt(r.creditChars) };
    },

    async reserveAudification(req, ctx) {
      requireInternalToken(ctx);
      checkProjectId(req.projectId);
      checkDay(req.day);
      return reservationAnswer(req.projectId, await store.reserve(req.projectId, req.day, charsOf(req.chars, 0)));
    },

    async reserveAudifications(req, ctx) {
      requireInternalToken(ctx);
      checkProjectId(req.projectId);
      checkDay(req.day);
      if (req.chars.length < 1 || req.chars.length > MAX_RESERVATIONS) throw new ConnectError(`chars: 1 to ${MAX_RESERVATIONS} articles per call`, Code.InvalidArgument);
      const outcomes = await store.reserveMany(
        req.projectId,
        req.day,
        req.chars.map((c) => charsOf(c, 0)),
        !req.outsideDailyLimit,
      );
      return { results: outcomes.map((r) => reservationAnswer(req.projectId, r)) };
    },

    async refundAudification(req, ctx) {
      requireInternalToken(ctx);
      checkProjectId(req.projectId);
      const balance = await store.refund(req.projectId, charsOf(req.chars, 1));
      log.info({ projectId: req.projectId, refunded: Number(req.chars), creditChars: balance }, "credit refunded");
      return { creditChars: balance === null ? undefined : BigInt(balance) };
    },
  };
}
