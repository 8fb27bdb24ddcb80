// What a caller of the articles service sees of a failure: a ConnectError as
// it is, a store's failure as Unavailable naming it (lib/rpc/storage-errors.ts),
// anything else (a store outage, a bug) as a plain Internal error, its details
// in the log only. For a whole call (the interceptor in app.ts) and for one
// item of a batch alike.
import { Code, ConnectError } from "@connectrpc/connect";
import type { Logger } from "../../lib/log.js";
import { requestIdFields } from "../../lib/rpc/request-id.js";
import { storageConnectError } from "../../lib/rpc/storage-errors.js";
import { StorageError } from "../../lib/store/errors.js";

export function publicError(err: unknown, log: Logger, procedure: string, requestId?: string): ConnectError {
  if (err instanceof ConnectError) return err;
  if (err instanceof StorageError) return storageConnectError(err);
  log.error({ err, procedure, ...requestIdFields(requestId) }, "articles call failed");
  return new ConnectError("Internal error in the articles service", Code.Internal);
}
