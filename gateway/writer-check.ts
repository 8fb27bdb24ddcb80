// Who may upload? Checked before a write's body is read, so a request with a
// bad or read-only token is refused without the gateway holding (or even
// receiving) its upload. The articles service still checks the token itself.
import { AuthService } from "../gen/auth/v1/auth_pb.js";
import { createCallerResolver, requirePublisher } from "../lib/rpc/caller.js";
import { rpcClient } from "../lib/rpc/client.js";

export type WriterCheck = (authorization: string) => Promise<void>;

/** Full-scope publisher tokens pass; valid answers are reused for a few seconds (see caller.ts). */
export function writerCheck(authUrl: string, internalToken?: string): WriterCheck {
  // The internal credential identifies the gateway to the auth service; it is
  // not accepted from publishers (no internalToken given to the resolver).
  const resolve = createCallerResolver({ auth: rpcClient(AuthService, authUrl, { token: internalToken, timeoutMs: 5_000 }) });
  return async (authorization) => {
    requirePublisher(await resolve(new Headers({ authorization })), "full");
  };
}
