// A real auth service on loopback over an SQLite store in a temp dir.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AuthService } from "../../gen/auth/v1/auth_pb.js";
import { logger } from "../../lib/log.js";
import { rpcClient } from "../../lib/rpc/client.js";
import type { RunningService } from "../../lib/service.js";
import { startAuthService } from "../../services/auth/app.js";
import type { AuthStore } from "../../services/auth/store/port.js";
import { openEmbeddedAuthStore } from "../../services/auth/store/open.js";

export const ADMIN = "admin-secret-for-tests-0123456789";
export const INTERNAL = "internal-secret-for-tests-0123456789";

export interface AuthFixture {
  dir: string;
  store: AuthStore;
  svc: RunningService;
  /** No credentials. */
  client: ReturnType<typeof rpcClient<typeof AuthService>>;
  /** The internal credential, as the services send it (Authenticate needs it). */
  internal: ReturnType<typeof rpcClient<typeof AuthService>>;
  clientWith(token: string): ReturnType<typeof rpcClient<typeof AuthService>>;
  stop(): Promise<void>;
}

export async function startAuthFixture(opts: { adminToken?: string } = {}): Promise<AuthFixture> {
  const dir = await mkdtemp(join(tmpdir(), "auth-svc-"));
  const store = await openEmbeddedAuthStore(dir);
  const svc = await startAuthService({ store, adminToken: opts.adminToken, internalToken: INTERNAL, log: logger("auth-test"), host: "127.0.0.1", port: 0 });
  return {
    dir,
    store,
    svc,
    client: rpcClient(AuthService, svc.url),
    internal: rpcClient(AuthService, svc.url, { token: INTERNAL }),
    clientWith: (token) => rpcClient(AuthService, svc.url, { token }),
    async stop() {
      await svc.close();
      await store.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Runs `fn`, expecting it to fail; returns the error. */
export async function rejection(fn: () => Promise<unknown>): Promise<Error> {
  try {
    await fn();
  } catch (e) {
    return e as Error;
  }
  throw new Error("expected a rejection, got success");
}
