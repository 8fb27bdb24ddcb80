import { createHash } from "node:crypto";

export interface ChunkIdentity {
  provider: string;
  model: string;
  voice: string;
  lang: string;
  prompt?: string;
  /** The normalised chunk text, exactly as sent to the provider. */
  text: string;
}

/** SHA-256 over length-prefixed fields, so no two different identities can collide by shifting text between fields. */
export function chunkKey(id: ChunkIdentity): string {
  const h = createHash("sha256");
  for (const field of [id.provider, id.model, id.voice, id.lang, id.prompt ?? "", id.text]) {
    const bytes = Buffer.from(field, "utf8");
    h.update(`${bytes.length}:`);
    h.update(bytes);
  }
  return h.digest("hex");
}
