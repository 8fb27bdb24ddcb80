// How a publisher's request is passed on to a service: its bearer header as it came, refused here
// first when missing or malformed (in the services' own words, before any upstream call), and the
// request id for the services' logs.
import type { Context } from "koa";
import { bearerTokenOf } from "../lib/rpc/caller.js";

export function publisherCall(ctx: Context): { headers: { authorization: string; "x-request-id": string } } {
  const authorization = ctx.get("Authorization");
  bearerTokenOf(authorization);
  return { headers: { authorization, "x-request-id": ctx.state.requestId as string } };
}
