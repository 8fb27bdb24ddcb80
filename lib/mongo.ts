// One MongoClient per URL for the whole process; services share the pool.
import { MongoClient, type CommandStartedEvent, type Db } from "mongodb";

const clients = new Map<string, Promise<MongoClient>>();
let commandWatcher: ((e: CommandStartedEvent) => void) | undefined;

/**
 * Sees every command sent to MongoDB from this process (driver command
 * monitoring), e.g. to count round trips in a test. Applies to clients
 * connected after the call; `undefined` stops it for those.
 */
export function watchMongoCommands(watcher: ((e: CommandStartedEvent) => void) | undefined): void {
  commandWatcher = watcher;
}

export async function mongoDb(url: string, dbName = "article_audio"): Promise<Db> {
  let p = clients.get(url);
  if (!p) {
    const watcher = commandWatcher;
    p = MongoClient.connect(url, { serverSelectionTimeoutMS: 10_000, appName: "article-audio", monitorCommands: watcher !== undefined }).then((c) => {
      if (watcher) c.on("commandStarted", watcher);
      return c;
    });
    clients.set(url, p);
    p.catch(() => clients.delete(url));
  }
  return (await p).db(dbName);
}

export async function closeMongo(): Promise<void> {
  const all = [...clients.values()];
  clients.clear();
  await Promise.allSettled(all.map(async (p) => (await p).close()));
}
