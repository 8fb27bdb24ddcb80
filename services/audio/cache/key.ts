import { createHash } from "node:crypto";
import type { PronunciationRule } from "../../../lib/pronunciations.js";
import { touchedRules } from "../text/pronounce.js";

export interface ChunkIdentity {
  provider: string;
  model: string;
  voice: string;
  lang: string;
  prompt?: string;
  /** The normalised chunk text, exactly as sent to the provider. */
  text: string;
  /** The article's pronunciation rules; only those whose marks the text holds are part of the key. */
  pronunciations?: readonly PronunciationRule[];
}

/** The rules that touched the chunk, by index and content: a changed rule makes a new key, an unrelated one does not. */
function rulesField(id: ChunkIdentity): string {
  const touched = touchedRules(id.text, id.pronunciations);
  return touched.length ? JSON.stringify(touched.map(([i, r]) => [i, r.match, r.caseSensitive ?? false, r.lang ?? "", r.say ?? "", r.spell ?? false, r.ipa ?? ""])) : "";
}

/** SHA-256 over length-prefixed fields, so no two different identities can collide by shifting text between fields. */
export function chunkKey(id: ChunkIdentity): string {
  const h = createHash("sha256");
  const fields = [id.provider, id.model, id.voice, id.lang, id.prompt ?? "", id.text];
  // Absent for text without rules, so keys made before rules existed stay valid.
  const rules = rulesField(id);
  if (rules) fields.push(rules);
  for (const field of fields) {
    const bytes = Buffer.from(field, "utf8");
    h.update(`${bytes.length}:`);
    h.update(bytes);
  }
  return h.digest("hex");
}
