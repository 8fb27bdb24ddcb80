// A writer to be killed: moves documents of a tallied MongoDB collection between groups as
// fast as it can, until the test kills it (-9) mid-write. argv: url, db, collection.
import { mongoDb } from "../../lib/mongo.js";
import { mongoCollection } from "../../lib/store/mongo-collection.js";
import { TALLY_WRITER_SPEC, TALLY_WRITER_DOCS, TALLY_WRITER_STATUSES } from "./tally-writer-spec.js";

const [url, dbName, name] = process.argv.slice(2);
const col = mongoCollection<{ _id: string; status: string }>(await mongoDb(url, dbName), name);
await col.ensureTally(TALLY_WRITER_SPEC);
let writes = 0;
for (;;) {
  const id = `d${Math.floor(Math.random() * TALLY_WRITER_DOCS)}`;
  const status = TALLY_WRITER_STATUSES[Math.floor(Math.random() * TALLY_WRITER_STATUSES.length)];
  await col.updateOne({ _id: id }, { $set: { status } });
  if (++writes === 20) process.stdout.write("writing\n");
}
