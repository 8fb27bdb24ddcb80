// The database the NeDB upgrade copies into in its unit tests: the embedded
// SQLite database start-up opens.
import { openSqliteDatabase } from "../../lib/store/sqlite-collection.js";
import type { UpgradeTarget } from "../../lib/store/nedb-upgrade.js";

export const openUpgradeTarget = (filename: string, what: string): Promise<UpgradeTarget> => openSqliteDatabase({ filename, what });
