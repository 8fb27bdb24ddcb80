// A write the store could not make, with the cause a client can act on. The
// stores guarantee that such a write changed nothing; callers answer it as a
// 5xx (507 for a full volume, 503 otherwise) naming the cause, never with the
// driver's own text (paths, hosts, credentials).

/** full: no space or quota left · read-only: the volume refuses writes · unavailable: I/O or database failure. */
export type StorageFailure = "full" | "read-only" | "unavailable";

export class StorageError extends Error {
  constructor(
    readonly failure: StorageFailure,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = "StorageError";
  }
}

const FULL = new Set(["ENOSPC", "EDQUOT", "EFBIG"]);
const READ_ONLY = new Set(["EROFS", "EACCES", "EPERM"]);

function storageErrorOf(failure: StorageFailure, code: string, what: string, cause: unknown): StorageError {
  if (failure === "full") return new StorageError("full", `the ${what} store's volume is full (${code}); nothing was written`, { cause });
  if (failure === "read-only") return new StorageError("read-only", `the ${what} store's volume is not writable (${code}); nothing was written`, { cause });
  return new StorageError("unavailable", `the ${what} store could not write (${code || "I/O error"}); nothing was written`, { cause });
}

/** A file-system error of the embedded store; `what` names the store, e.g. "articles". */
export function storageErrorFromFs(err: unknown, what: string): StorageError {
  const code = (err as NodeJS.ErrnoException)?.code ?? "";
  return storageErrorOf(FULL.has(code) ? "full" : READ_ONLY.has(code) ? "read-only" : "unavailable", code, what, err);
}

/** An error of the SQLite engine (better-sqlite3's `code`, e.g. SQLITE_FULL, SQLITE_READONLY_DBMOVED, SQLITE_IOERR_WRITE). */
export function storageErrorFromSqlite(err: unknown, what: string): StorageError {
  const code = String((err as { code?: unknown })?.code ?? "");
  const failure: StorageFailure = code === "SQLITE_FULL" ? "full" : code.startsWith("SQLITE_READONLY") || code === "SQLITE_PERM" ? "read-only" : "unavailable";
  return storageErrorOf(failure, code, what, err);
}

/** The metadata key that carries the failure from a service to the gateway (RPC code Unavailable). */
export const STORAGE_FAILURE_KEY = "storage-failure";

/** What the public API says for each failure (no internals), and its HTTP status. */
export const STORAGE_FAILURE_ANSWER: Record<StorageFailure, { status: number; message: string }> = {
  full: { status: 507, message: "Insufficient storage: the data volume is full, nothing was written; retry once space is freed" },
  "read-only": { status: 503, message: "Storage is read-only: nothing was written; retry later" },
  unavailable: { status: 503, message: "The database is unavailable: nothing was written; retry later" },
};

export const isStorageFailure = (v: string | null | undefined): v is StorageFailure => v === "full" || v === "read-only" || v === "unavailable";
