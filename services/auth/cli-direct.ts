// `npm run admin` without AUTH_URL on the embedded default: the command runs against the auth
// database under DATA_DIR through an auth service started inside the command, so every check
// and every write is the service's own. This is how a lost demo token is recovered without
// restarting the platform with ADMIN_TOKEN.
//
// Only while no other process has that database open. The running platform reads through a
// snapshot that moves forward after its own commits only (lib/store/sqlite-database.ts), and
// keeps some of a table's state in memory, so a row written from outside might not be seen by
// it until it restarts: such a write is refused, not made.
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { pino } from "pino";
import { DATA_VARS } from "../../lib/adapters.js";
import { loadConfig } from "../../lib/config.js";
import { allowPrivateFrom } from "../../lib/net/allow-list.js";
import { isSqliteError, sqliteDriver } from "../../lib/store/sqlite-binding.js";
import { startAuthService } from "./app.js";
import { openEmbeddedAuthStore } from "./store/open.js";

/** The command cannot run on DATA_DIR; the message says why and what to do instead. */
export class DirectRefusal extends Error {}

export interface DirectAuth {
  /** What the command's client calls instead of AUTH_URL and ADMIN_TOKEN. */
  url: string;
  adminToken: string;
  close(): Promise<void>;
}

/** Path of the embedded default's auth database under a data directory. */
export const authDatabaseOf = (dataDir: string) => join(dataDir, "auth", "auth.sqlite");

/**
 * Whether another connection has the database open. Every open connection of a database in WAL
 * mode holds a shared lock on its file, so an exclusive lock is granted only when there is none.
 */
function heldElsewhere(file: string): boolean {
  const db = new (sqliteDriver())(file, { fileMustExist: true });
  try {
    // A start-up in progress holds the lock only for a moment.
    db.pragma("busy_timeout = 500");
    db.pragma("locking_mode = EXCLUSIVE");
    db.exec("BEGIN EXCLUSIVE");
    db.exec("COMMIT");
    return false;
  } catch (e) {
    if (isSqliteError(e) && (e.code === "SQLITE_BUSY" || e.code === "SQLITE_LOCKED")) return true;
    throw e;
  } finally {
    db.close();
  }
}

export async function openDirectAuth(env: Record<string, string | undefined>): Promise<DirectAuth> {
  const { DATA_DIR } = loadConfig(DATA_VARS, env);
  const file = authDatabaseOf(DATA_DIR);
  if (!existsSync(file)) {
    throw new DirectRefusal(`no platform data in DATA_DIR=${DATA_DIR} (${file} does not exist): start the platform once with npm start, or set DATA_DIR to its data directory`);
  }
  if (heldElsewhere(file)) {
    throw new DirectRefusal(
      `the platform is running on DATA_DIR=${DATA_DIR} and holds its auth database; a change written beside it might not be seen until it restarts, so nothing was changed. ` +
        "Stop it (Ctrl-C in its terminal), run this command again, then start it again; " +
        "or, if it was started with ADMIN_TOKEN, set AUTH_URL (its authUrl) and ADMIN_TOKEN to call it instead",
    );
  }
  const store = await openEmbeddedAuthStore(DATA_DIR);
  // Only this process calls it, in-process: the data directory is the credential here.
  const adminToken = randomBytes(24).toString("base64url");
  try {
    const svc = await startAuthService({
      store,
      adminToken,
      log: pino({ level: "silent" }),
      host: "127.0.0.1",
      port: 0,
      inProcess: true,
      webhookTargets: { allowPrivate: allowPrivateFrom(env.FETCH_ALLOW_PRIVATE) },
    });
    return {
      url: svc.url,
      adminToken,
      async close() {
        await svc.close();
        await store.close();
      },
    };
  } catch (e) {
    await store.close();
    throw e;
  }
}
