// GET /api/token: what the caller's token is (its scope and project), so a
// client such as the console can tell a read-only token from a full one at
// sign-in without trying a write. Any valid publisher token; the answer never
// carries the token, its hash or its id (nothing a log or a screenshot of the
// answer could leak that the caller did not already hold).
import type { Router } from "@koa/router";
import type { Context } from "koa";
import { Code, ConnectError } from "@connectrpc/connect";
import { bearerTokenOf, type CallerResolver } from "../../lib/rpc/caller.js";

type Schema = Record<string, unknown>;

export const TokenResult: Schema = {
  type: "object",
  additionalProperties: false,
  required: ["result", "scope", "project"],
  description: "The calling token's scope and project.",
  properties: {
    result: { type: "string", const: "ok" },
    scope: { type: "string", enum: ["full", "read"], description: "`full` may create, update and delete; `read` may only read." },
    project: { type: "string", minLength: 1, description: "Id of the project the token belongs to (the id articles, statistics and the player are scoped by)." },
  },
  examples: [{ result: "ok", scope: "full", project: "demo" }],
};

/** Named in the OpenAPI document beside SCHEMAS. */
export const TOKEN_SCHEMAS = { TokenResult } as const;

export function tokenRoutes(router: Router, callers: CallerResolver): void {
  router.get("/api/token", async (ctx: Context) => {
    const authorization = ctx.get("Authorization");
    // Missing or malformed header: the usual 401 without asking the auth service.
    bearerTokenOf(authorization);
    const caller = await callers(new Headers({ authorization }));
    // The resolver the gateway holds knows publisher tokens only; anything else is no API token here.
    if (caller.kind !== "publisher") throw new ConnectError("Invalid API token", Code.Unauthenticated);
    // Per token: a shared cache must not hand one token's answer to another.
    ctx.set("Cache-Control", "no-store");
    ctx.body = { result: "ok", scope: caller.scope, project: caller.projectId };
  });
}
