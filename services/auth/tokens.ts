// Token material: how plain tokens look, how they are hashed, and the
// record stored for them.
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { TokenRecord, TokenScope } from "./store/port.js";

/** Recognisable in configs and leak scanners; not a secret. */
export const TOKEN_PREFIX = "aa_";
export const PREFIX_LENGTH = 8;
export const PROJECT_ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

export const hashToken = (token: string): string => createHash("sha256").update(token, "utf8").digest("hex");

export function newPlainToken(): string {
  return TOKEN_PREFIX + randomBytes(32).toString("base64url");
}

export function newTokenId(): string {
  return "tok_" + randomBytes(9).toString("base64url");
}

export function newProjectId(): string {
  return "p_" + randomBytes(9).toString("base64url");
}

export function tokenRecord(token: string, projectId: string, scope: TokenScope, created = new Date()): TokenRecord {
  return { id: newTokenId(), projectId, scope, hash: hashToken(token), prefix: token.slice(0, PREFIX_LENGTH), created, revoked: null };
}

/** Constant-time equality of two hex SHA-256 digests. */
export function sameHash(a: string, b: string): boolean {
  const x = Buffer.from(a, "hex");
  const y = Buffer.from(b, "hex");
  return x.length === 32 && y.length === 32 && timingSafeEqual(x, y);
}
