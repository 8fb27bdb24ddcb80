// The database the NeDB upgrade copies into, for the upgrade's unit tests.
// Until the SQLite driver is on this branch it is a set of NeDB files beside
// `filename` (the port is all the upgrade uses); afterwards openSqliteDatabase.
import type { DocumentCollection } from "../../lib/store/collection.js";
import { openNedbCollection } from "../../lib/store/nedb-collection.js";
import type { UpgradeTarget } from "../../lib/store/nedb-upgrade.js";

export async function openUpgradeTarget(filename: string, what: string): Promise<UpgradeTarget> {
  const opened = new Map<string, Promise<DocumentCollection<{ _id: string }>>>();
  return {
    collection<D extends { _id: string }>(name: string): DocumentCollection<D> {
      if (!opened.has(name)) opened.set(name, openNedbCollection({ filename: `${filename}.${name}.db`, what: `${what} ${name}` }));
      const col = opened.get(name)!;
      return new Proxy({} as DocumentCollection<D>, { get: (_t, method) => async (...args: unknown[]) => ((await col) as unknown as Record<string | symbol, (...a: unknown[]) => unknown>)[method](...args) });
    },
    async close() {
      for (const c of opened.values()) await (await c).close();
    },
  };
}
