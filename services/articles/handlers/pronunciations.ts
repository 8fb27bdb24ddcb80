// Pronunciation rules of the caller's project: a read token may read them, a
// full token replaces the whole list. The list is checked here as well as at
// the gateway, so no caller can store a rule the audio side cannot apply.
import type { ServiceImpl } from "@connectrpc/connect";
import type { ArticlesService } from "../../../gen/articles/v1/articles_pb.js";
import { cleanRule, pronunciationProblem } from "../../../lib/pronunciations.js";
import { ruleFromProto, ruleToProto } from "../../../lib/rpc/pronunciations.js";
import * as v from "../validate.js";
import type { HandlerShared } from "./context.js";

type Calls = Pick<ServiceImpl<typeof ArticlesService>, "getPronunciations" | "setPronunciations">;

export function pronunciationHandlers(s: HandlerShared): Calls {
  const { store, publisher, log } = s;
  return {
    async getPronunciations(_req, ctx) {
      const caller = await publisher(ctx, "read");
      return { pronunciations: (await store.getPronunciations(caller.projectId)).map(ruleToProto) };
    },

    async setPronunciations(req, ctx) {
      const caller = await publisher(ctx, "full");
      const rules = req.pronunciations.map(ruleFromProto);
      const problem = pronunciationProblem(rules);
      if (problem) throw v.invalid(problem);
      const clean = rules.map(cleanRule);
      await store.setPronunciations(caller.projectId, clean);
      log.info({ projectId: caller.projectId, rules: clean.length }, "pronunciation rules replaced");
      return { pronunciations: clean.map(ruleToProto) };
    },
  };
}
