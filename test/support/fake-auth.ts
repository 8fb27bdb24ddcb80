// An auth service that only resolves the tokens it is given: for tests of the
// articles service and the gateway that need callers, not projects.
import { Code, ConnectError } from "@connectrpc/connect";
import { AuthService, Scope } from "../../gen/auth/v1/auth_pb.js";
import { logger } from "../../lib/log.js";
import { startRpcServer, type RpcServer } from "../../lib/rpc/server.js";

export type FakeTokens = Record<string, { projectId: string; scope: "full" | "read" }>;

export function startFakeAuth(tokens: FakeTokens): Promise<RpcServer> {
  return startRpcServer({
    name: "auth-fake",
    services: [AuthService.typeName],
    log: logger("auth-fake"),
    routes: (router) =>
      router.service(AuthService, {
        authenticate(req) {
          const t = tokens[req.token];
          if (!t) throw new ConnectError("unknown token", Code.Unauthenticated);
          return { projectId: t.projectId, scope: t.scope === "full" ? Scope.FULL : Scope.READ, tokenId: `id-${req.token}` };
        },
      }),
  });
}
