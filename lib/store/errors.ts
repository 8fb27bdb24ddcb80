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

/** A file-system error of the embedded store; `what` names the store, e.g. "articles". */
export function storageErrorFromFs(err: unknown, what: string): StorageError {
  const code = (err as NodeJS.ErrnoException)?.code ?? "";
  if (FULL.has(code)) return new StorageError("full", `the ${what} store's volume is full (${code}); nothing was written`, { cause: err });
  if (READ_ONLY.has(code)) return new StorageError("read-only", `the ${what} store's volume is not writable (${code}); nothing was written`, { cause: err });
  return new StorageError("unavailable", `the ${what} store could not write (${code || "I/O error"}); nothing was written`, { cause: err });
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
