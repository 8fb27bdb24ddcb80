// A store's StorageError leaves a service as Unavailable with the failure
// named in the error's metadata, so the gateway can answer 507 for a full
// volume and 503 otherwise (gateway/errors.ts) instead of a generic 500.
import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { STORAGE_FAILURE_KEY, StorageError } from "../store/errors.js";

export function storageErrorInterceptor(): Interceptor {
  return (next) => async (req) => {
    try {
      return await next(req);
    } catch (err) {
      if (!(err instanceof StorageError)) throw err;
      throw new ConnectError(err.message, Code.Unavailable, { [STORAGE_FAILURE_KEY]: err.failure }, undefined, err);
    }
  };
}
