// The credential checks shared by the auth service's RPC services: the
// internal service token, the admin token and publisher tokens (looked up by
// hash). No message ever contains a token.
import { createHash, timingSafeEqual } from "node:crypto";
import { Code, ConnectError, type HandlerContext } from "@connectrpc/connect";
import type { AuthStore, TokenRecord } from "./store/port.js";

/** Longer inputs are not tokens we issue or accept; refuse before hashing. */
export const MAX_TOKEN_LENGTH = 512;

const digestOf = (s: string) => createHash("sha256").update(s, "utf8").digest();
const bearerOf = (ctx: HandlerContext) => /^Bearer[ ]+(\S+)\s*$/i.exec(ctx.requestHeader.get("authorization") ?? "")?.[1];

export interface CredentialOptions {
  store: AuthStore;
  adminToken?: string;
  internalToken?: string;
}

export type CredentialChecks = ReturnType<typeof createCredentialChecks>;

export function createCredentialChecks(opts: CredentialOptions) {
  const { store } = opts;
  const adminDigest = opts.adminToken ? digestOf(opts.adminToken) : undefined;
  const internalDigest = opts.internalToken ? digestOf(opts.internalToken) : undefined;

  /** True for the internal token; false for anything else (which then has to pass requireAdmin). */
  function isInternal(ctx: HandlerContext): boolean {
    const token = bearerOf(ctx);
    if (!token || !internalDigest) return false;
    return timingSafeEqual(digestOf(token), internalDigest);
  }

  function requireInternalToken(ctx: HandlerContext): void {
    if (!isInternal(ctx)) throw new ConnectError("this call is reserved for internal services", Code.PermissionDenied);
  }

  async function requireAdmin(ctx: HandlerContext): Promise<void> {
    if (!adminDigest) throw new ConnectError("admin API disabled: set ADMIN_TOKEN", Code.PermissionDenied);
    const header = ctx.requestHeader.get("authorization");
    if (!header) throw new ConnectError("admin call without credentials: send 'authorization: Bearer <ADMIN_TOKEN>'", Code.Unauthenticated);
    const token = bearerOf(ctx);
    if (!token) throw new ConnectError("malformed authorization header: expected 'Bearer <ADMIN_TOKEN>'", Code.Unauthenticated);
    // Equal-length digests make the comparison constant-time whatever was sent.
    const digest = digestOf(token);
    if (timingSafeEqual(digest, adminDigest)) return;
    if (token.length <= MAX_TOKEN_LENGTH && (await store.findActiveTokenByHash(digest.toString("hex")))) {
      throw new ConnectError("a publisher API token cannot call admin RPCs; use ADMIN_TOKEN", Code.PermissionDenied);
    }
    throw new ConnectError("invalid admin token", Code.Unauthenticated);
  }

  /** The caller's active publisher token, with at least `scope`. */
  async function requirePublisherToken(ctx: HandlerContext, scope: "read" | "full"): Promise<TokenRecord> {
    const token = bearerOf(ctx);
    if (!token) throw new ConnectError("Missing or malformed Authorization header: send 'Authorization: Bearer <API_TOKEN>'", Code.Unauthenticated);
    const found = token.length <= MAX_TOKEN_LENGTH ? await store.findActiveTokenByHash(digestOf(token).toString("hex")) : null;
    if (!found) throw new ConnectError("Invalid API token", Code.Unauthenticated);
    if (scope === "full" && found.scope !== "full") throw new ConnectError("This token is read-only; this call needs a full token", Code.PermissionDenied);
    return found;
  }

  return { isInternal, requireInternalToken, requireAdmin, requirePublisherToken };
}
