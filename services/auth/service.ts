// The AuthService implementation. Publisher tokens are resolved by hash; the
// admin RPCs need ADMIN_TOKEN and never accept a publisher token. No error
// message ever contains a token.
import { createHash, timingSafeEqual } from "node:crypto";
import { Code, ConnectError, type HandlerContext, type ServiceImpl } from "@connectrpc/connect";
import { create } from "@bufbuild/protobuf";
import { AuthService, ProjectSchema, Scope, TokenInfoSchema, type Project, type TokenInfo } from "../../gen/auth/v1/auth_pb.js";
import type { Logger } from "../../lib/log.js";
import { DuplicateTokenError, type AuthStore, type ProjectRecord, type TokenRecord, type TokenScope } from "./store/port.js";
import { hashToken, newPlainToken, newProjectId, PROJECT_ID_PATTERN, sameHash, tokenRecord } from "./tokens.js";

/** Longer inputs are not tokens we issue or accept; refuse before hashing. */
const MAX_TOKEN_LENGTH = 512;
const MAX_NAME_LENGTH = 200;
const TOKEN_ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

export interface AuthServiceOptions {
  store: AuthStore;
  /** Unset disables every admin RPC. */
  adminToken?: string;
  log: Logger;
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
  const adminDigest = opts.adminToken ? createHash("sha256").update(opts.adminToken, "utf8").digest() : undefined;

  async function requireAdmin(ctx: HandlerContext): Promise<void> {
    if (!adminDigest) throw new ConnectError("admin API disabled: set ADMIN_TOKEN", Code.PermissionDenied);
    const header = ctx.requestHeader.get("authorization");
    if (!header) throw new ConnectError("admin call without credentials: send 'authorization: Bearer <ADMIN_TOKEN>'", Code.Unauthenticated);
    const m = /^Bearer[ ]+(\S+)\s*$/i.exec(header);
    if (!m) throw new ConnectError("malformed authorization header: expected 'Bearer <ADMIN_TOKEN>'", Code.Unauthenticated);
    // Equal-length digests make the comparison constant-time whatever was sent.
    const digest = createHash("sha256").update(m[1], "utf8").digest();
    if (timingSafeEqual(digest, adminDigest)) return;
    if (m[1].length <= MAX_TOKEN_LENGTH && (await store.findActiveTokenByHash(digest.toString("hex")))) {
      throw new ConnectError("a publisher API token cannot call admin RPCs; use ADMIN_TOKEN", Code.PermissionDenied);
    }
    throw new ConnectError("invalid admin token", Code.Unauthenticated);
  }

  async function requireProject(id: string): Promise<ProjectRecord> {
    const p = await store.getProject(checkProjectId(id));
    if (!p) throw new ConnectError(`project '${id}' not found`, Code.NotFound);
    return p;
  }

  return {
    async authenticate(req) {
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
      await requireAdmin(ctx);
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
  };
}
