// Who may upload? Checked before a write's body is read, so a request with a
// bad or read-only token is refused without the gateway holding (or even
// receiving) its upload. The articles service still checks the token itself.
import { AuthService } from "../gen/auth/v1/auth_pb.js";
import { createCallerResolver, requirePublisher, type CallerResolver } from "../lib/rpc/caller.js";
import { rpcClient } from "../lib/rpc/client.js";

export type WriterCheck = (authorization: string) => Promise<void>;

/**
 * Publisher tokens as the auth service knows them; valid answers are reused for a few seconds
 * (see caller.ts). One per gateway, so a token checked by one route is known to the others.
 */
export function publisherCallers(authUrl: string, internalToken?: string): CallerResolver {
  // The internal credential identifies the gateway to the auth service; it is
  // not accepted from publishers (no internalToken given to the resolver), and
  // neither are player keys (no player client).
  return createCallerResolver({ auth: rpcClient(AuthService, authUrl, { token: internalToken, timeoutMs: 5_000 }) });
}

/** Full-scope publisher tokens pass. */
export function writerCheck(resolve: CallerResolver): WriterCheck {
  return async (authorization) => {
    requirePublisher(await resolve(new Headers({ authorization })), "full");
  };
}
