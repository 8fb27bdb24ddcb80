// GET and PUT /api/pronunciations: the project's pronunciation rules. Any
// token of the project may read them; replacing the list needs a full token
// (ArticlesService checks the scope). The body of PUT is the whole list.
import type { Client } from "@connectrpc/connect";
import type { Router } from "@koa/router";
import type { ArticlesService } from "../../gen/articles/v1/articles_pb.js";
import { ruleFromProto, ruleToProto } from "../../lib/rpc/pronunciations.js";
import { readJsonBody } from "../body.js";
import { validatePronunciations } from "../schemas.js";
import { publisherCall } from "../publisher-call.js";

export interface PronunciationRoutesOptions {
  client: Client<typeof ArticlesService>;
  maxBodyBytes: number;
}

export function pronunciationRoutes(router: Router, { client, maxBodyBytes }: PronunciationRoutesOptions): void {
  router.get("/api/pronunciations", async (ctx) => {
    const res = await client.getPronunciations({}, publisherCall(ctx));
    ctx.body = { result: "ok", pronunciations: res.pronunciations.map(ruleFromProto) };
  });

  router.put("/api/pronunciations", async (ctx) => {
    const call = publisherCall(ctx);
    const rules = validatePronunciations(await readJsonBody(ctx, maxBodyBytes));
    const res = await client.setPronunciations({ pronunciations: rules.map(ruleToProto) }, call);
    ctx.body = { result: "ok", pronunciations: res.pronunciations.map(ruleFromProto) };
  });
}
