// The data directory the NeDB release wrote (test/fixtures/nedb-release, made
// by its generate.ts on that release) and what its manifest says it holds.
import { cp, mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const NEDB_FIXTURE = path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "fixtures", "nedb-release");

export type NedbManifest = {
  tokens: Record<"newsFull" | "newsRead" | "newsRevoked" | "limitedFull" | "payingFull", string>;
  revokedTokenId: string;
  oembedHost: string;
  publicKey: string;
  /** Article ids by what the generator made of them (the statuses are names too). */
  ids: Record<string, string>;
  settings: Record<string, Record<string, unknown>>;
  articleStats: { from: string; to: string; total: Record<string, number> };
  projectStats: { total: Record<string, number> };
  articles: Record<string, Record<string, unknown>>;
};

/** A copy of the fixture's data directory in a fresh temporary one. */
export async function nedbDataDir(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), "upgrade-nedb-"));
  await cp(path.join(NEDB_FIXTURE, "data"), dir, { recursive: true });
  return dir;
}

export const nedbManifest = async (): Promise<NedbManifest> => JSON.parse(await readFile(path.join(NEDB_FIXTURE, "manifest.json"), "utf8"));

/** Ids of project news's articles that a list shows (not deleted), each once. */
export const listedNewsIds = (m: NedbManifest): string[] => [...new Set(Object.entries(m.ids).filter(([n]) => !n.startsWith("limit") && n !== "noMoney" && n !== "deleted").map(([, id]) => id))];
