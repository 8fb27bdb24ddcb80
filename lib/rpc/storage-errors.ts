// A store's StorageError leaves a service as Unavailable with the failure
// named in the error's metadata, so the gateway can answer 507 for a full
// volume and 503 otherwise (gateway/errors.ts) instead of a generic 500.
import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { STORAGE_FAILURE_KEY, StorageError } from "../store/errors.js";

/** The error a caller gets for a store's failure: Unavailable, the failure named in the metadata. */
export function storageConnectError(err: StorageError): ConnectError {
  return new ConnectError(err.message, Code.Unavailable, { [STORAGE_FAILURE_KEY]: err.failure }, undefined, err);
}

export function storageErrorInterceptor(): Interceptor {
  return (next) => async (req) => {
    try {
      return await next(req);
    } catch (err) {
      throw err instanceof StorageError ? storageConnectError(err) : err;
    }
  };
}
