// A writer to be killed: moves articles of a MongoDB article store between statuses and labels
// (the groups of the list filters' counts) as fast as it can, until the test kills it (-9)
// mid-write. argv: url, db, collection.
import { mongoDb } from "../../lib/mongo.js";
import { openMongoArticleStore } from "../../services/articles/store/open.js";
import { ARTICLE_WRITER_DOCS, ARTICLE_WRITER_LABELS, ARTICLE_WRITER_PROJECT } from "./article-writer-spec.js";

const [url, dbName, name] = process.argv.slice(2);
const store = await openMongoArticleStore(await mongoDb(url, dbName), name);
const pick = <T>(xs: readonly T[]) => xs[Math.floor(Math.random() * xs.length)];
let writes = 0;
for (;;) {
  const id = `w${Math.floor(Math.random() * ARTICLE_WRITER_DOCS)}`;
  const a = await store.get(ARTICLE_WRITER_PROJECT, id);
  if (!a) continue;
  switch (Math.floor(Math.random() * 4)) {
    case 0:
      await store.update(ARTICLE_WRITER_PROJECT, id, a.revision, { labels: ARTICLE_WRITER_LABELS.filter(() => Math.random() < 0.5) });
      break;
    case 1:
      if (await store.claim(id, a.revision)) await store.complete(id, a.revision, { audio: { key: "k", duration: 1 } });
      break;
    case 2:
      await store.fail(id, a.revision, "boom");
      break;
    default:
      await store.reportStatus(id, a.revision, pick(["retry", "fallback"] as const));
  }
  if (++writes === 20) process.stdout.write("writing\n");
}
