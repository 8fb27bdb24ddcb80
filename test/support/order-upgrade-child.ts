// A process that runs the list order's background pass (order-upgrade.ts) over an articles
// database and nothing else, so a test can kill it (SIGKILL) in the middle of the pass.
// Usage: node --import tsx test/support/order-upgrade-child.ts <database file> <page size>
import { openSqliteDatabase } from "../../lib/store/sqlite-collection.js";
import { embeddedLayout, type ArticleDoc } from "../../services/articles/store/layout.js";
import { upgradeOrder } from "../../services/articles/store/order-upgrade.js";
import { TEXT_FIELDS } from "../../services/articles/store/port.js";

const [file, page] = process.argv.slice(2);
const db = await openSqliteDatabase({ filename: file, what: "articles" });
const col = db.collection<ArticleDoc>("articles", { packed: TEXT_FIELDS });
const marks = db.collection<never>("pronunciations");
const upgrade = await upgradeOrder(col, marks, embeddedLayout, () => false, Number(page));
process.stdout.write("ready\n");
await upgrade.done;
process.stdout.write("done\n");
await col.close();
await marks.close();
await db.close();
