// Pronunciation rules to and from their protobuf message: the articles
// service sends them, the audio worker receives them.
import { create } from "@bufbuild/protobuf";
import { PronunciationRuleSchema, type PronunciationRule as ProtoRule } from "../../gen/articles/v1/articles_pb.js";
import type { PronunciationRule } from "../pronunciations.js";

export function ruleFromProto(r: ProtoRule): PronunciationRule {
  const out: PronunciationRule = { match: r.match };
  if (r.caseSensitive) out.caseSensitive = true;
  if (r.lang !== undefined) out.lang = r.lang;
  if (r.say !== undefined) out.say = r.say;
  if (r.spell) out.spell = true;
  if (r.ipa !== undefined) out.ipa = r.ipa;
  return out;
}

export function ruleToProto(r: PronunciationRule): ProtoRule {
  return create(PronunciationRuleSchema, { match: r.match, caseSensitive: r.caseSensitive ?? false, lang: r.lang, say: r.say, spell: r.spell ?? false, ipa: r.ipa });
}
