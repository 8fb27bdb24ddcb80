// Who is calling? Every service resolves the bearer token itself (the gateway
// is not the only line of defence). Publisher tokens go to the auth service,
// with results cached for a few seconds; the internal service token is
// compared locally in constant time.
import { createHash, timingSafeEqual } from "node:crypto";
import { Code, ConnectError, type Client } from "@connectrpc/connect";
import { AuthService, Scope } from "../../gen/auth/v1/auth_pb.js";
import type { PlayerService } from "../../gen/auth/v1/player_pb.js";

export type Caller =
  | { kind: "publisher"; projectId: string; scope: "full" | "read"; tokenId: string }
  | { kind: "listener"; projectId: string }
  | { kind: "internal" };

export interface CallerResolverOptions {
  auth: Client<typeof AuthService>;
  /** Resolves public player keys (pk_…), sending the internal token; absent: such keys are refused. */
  player?: Client<typeof PlayerService>;
  /** Recognised locally as the internal caller, and sent to Authenticate, which requires it. */
  internalToken?: string;
  /** How long a successful lookup is reused; revocations take effect after this. */
  ttlMs?: number;
  maxEntries?: number;
}

export type CallerResolver = (headers: Headers) => Promise<Caller>;

const sha256 = (s: string) => createHash("sha256").update(s).digest();

/** Extracts the token from "Bearer <token>"; throws Unauthenticated otherwise. */
export function bearerToken(headers: Headers): string {
  return bearerTokenOf(headers.get("authorization"));
}

/** Same as bearerToken, for the raw header value (no Headers object needed). */
export function bearerTokenOf(h: string | null | undefined): string {
  if (!h) throw new ConnectError("Missing Authorization header: send 'Authorization: Bearer <API_TOKEN>'", Code.Unauthenticated);
  const m = /^Bearer[ ]+(\S+)\s*$/i.exec(h);
  if (!m) throw new ConnectError("Malformed Authorization header: expected 'Bearer <API_TOKEN>'", Code.Unauthenticated);
  return m[1];
}

export function createCallerResolver(opts: CallerResolverOptions): CallerResolver {
  const ttl = opts.ttlMs ?? 5_000;
  const max = opts.maxEntries ?? 10_000;
  const internal = opts.internalToken ? sha256(opts.internalToken) : undefined;
  // Keyed by the token itself: only tokens the auth service accepted get in, so a client cannot
  // fill it with what it sends, and a hit costs no SHA-256 (one per call was ~2% of a read).
  // The internal token never gets in: it is only ever recognised by the constant-time compare.
  const cache = new Map<string, { caller: Caller; expires: number }>();
  // Authenticate answers only the internal credential (it would be a token oracle otherwise).
  const authCall = opts.internalToken ? { headers: { authorization: `Bearer ${opts.internalToken}` } } : undefined;
  const inflight = new Map<string, Promise<Caller>>();

  return async (headers) => {
    const token = bearerToken(headers);
    const hit = cache.get(token);
    if (hit && hit.expires > Date.now()) return hit.caller;
    const digest = sha256(token);
    if (internal && timingSafeEqual(digest, internal)) return { kind: "internal" };
    const key = digest.toString("base64");
    let p = inflight.get(key);
    if (!p) {
      p = (token.startsWith("pk_") ? resolveListener(token) : resolvePublisher(token))
        .then((caller) => {
          if (cache.size >= max) cache.delete(cache.keys().next().value as string);
          cache.set(token, { caller, expires: Date.now() + ttl });
          return caller;
        })
        .finally(() => inflight.delete(key));
      inflight.set(key, p);
    }
    return p;
  };

  function resolvePublisher(token: string): Promise<Caller> {
    return opts.auth
        .authenticate({ token }, authCall)
        .then((r): Caller => {
          const caller: Caller = {
            kind: "publisher",
            projectId: r.projectId,
            scope: r.scope === Scope.FULL ? "full" : "read",
            tokenId: r.tokenId,
          };
          return caller;
        })
        .catch((e: unknown) => {
          const ce = ConnectError.from(e);
          if (ce.code === Code.Unauthenticated) throw new ConnectError("Invalid API token", Code.Unauthenticated);
          throw new ConnectError(`Authentication unavailable: ${ce.rawMessage}`, Code.Unavailable);
        });
  }

  async function resolveListener(publicKey: string): Promise<Caller> {
    if (!opts.player) throw new ConnectError("Player keys are not accepted here", Code.Unauthenticated);
    try {
      const r = await opts.player.resolvePlayerKey({ publicKey });
      return { kind: "listener", projectId: r.player!.projectId };
    } catch (e) {
      const ce = ConnectError.from(e);
      if (ce.code === Code.NotFound) throw new ConnectError("Invalid player key", Code.Unauthenticated);
      throw new ConnectError(`Authentication unavailable: ${ce.rawMessage}`, Code.Unavailable);
    }
  }
}

export function requirePublisher(caller: Caller, scope: "read" | "full"): Extract<Caller, { kind: "publisher" }> {
  if (caller.kind !== "publisher") throw new ConnectError("This call needs a publisher API token", Code.PermissionDenied);
  if (scope === "full" && caller.scope !== "full") {
    throw new ConnectError("This token is read-only; creating, updating and deleting articles needs a full token", Code.PermissionDenied);
  }
  return caller;
}

/** A listener (player key) or a publisher of any scope: both may read what is public of the project. */
export function requireListener(caller: Caller): { projectId: string } {
  if (caller.kind === "internal") throw new ConnectError("This call needs a player key or a publisher API token", Code.PermissionDenied);
  return caller;
}

export function requireInternal(caller: Caller): void {
  if (caller.kind !== "internal") throw new ConnectError("This call is reserved for internal services", Code.PermissionDenied);
}
