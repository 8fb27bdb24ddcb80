// One MongoClient per URL for the whole process; services share the pool.
import { MongoClient, type Db } from "mongodb";

const clients = new Map<string, Promise<MongoClient>>();

export async function mongoDb(url: string, dbName = "article_audio"): Promise<Db> {
  let p = clients.get(url);
  if (!p) {
    p = MongoClient.connect(url, { serverSelectionTimeoutMS: 10_000, appName: "article-audio" });
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
