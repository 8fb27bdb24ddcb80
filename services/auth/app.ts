// Starts the auth service on its own Connect/gRPC port.
import { AuthService } from "../../gen/auth/v1/auth_pb.js";
import { PlayerService } from "../../gen/auth/v1/player_pb.js";
import type { Logger } from "../../lib/log.js";
import { startRpcServer } from "../../lib/rpc/server.js";
import type { RunningService } from "../../lib/service.js";
import type { OembedVerifierConfig } from "./oembed-hosts.js";
import { createPlayerServiceImpl } from "./player.js";
import { createAuthServiceImpl } from "./service.js";
import type { WebhookTargetOptions } from "./settings.js";
import type { AuthStore } from "./store/port.js";

export interface AuthServiceStartOptions {
  store: AuthStore;
  /** Unset: the admin RPCs answer PermissionDenied. */
  adminToken?: string;
  /** Unset: the internal calls (settings for services, reservations) answer PermissionDenied. */
  internalToken?: string;
  log: Logger;
  host?: string;
  /** 0 (default) picks a free port. */
  port?: number;
  /** Callers in this process skip the socket (the embedded default; see lib/rpc/in-process.ts). */
  inProcess?: boolean;
  /** Private webhook receivers settings:set accepts (FETCH_ALLOW_PRIVATE). */
  webhookTargets?: WebhookTargetOptions;
  /** oEmbed host verification: re-check interval, grace, which private hosts it may reach (OEMBED_VARS, FETCH_ALLOW_PRIVATE). */
  oembed?: OembedVerifierConfig;
}

/** The store stays open after close(); its owner closes it. */
export async function startAuthService(opts: AuthServiceStartOptions): Promise<RunningService> {
  const credentials = { store: opts.store, adminToken: opts.adminToken, internalToken: opts.internalToken, log: opts.log };
  const impl = createAuthServiceImpl({ ...credentials, webhookTargets: opts.webhookTargets });
  const player = createPlayerServiceImpl({ ...credentials, oembed: opts.oembed });
  const server = await startRpcServer({
    name: "auth",
    services: [AuthService.typeName, PlayerService.typeName],
    routes: (router) => router.service(AuthService, impl).service(PlayerService, player),
    host: opts.host,
    port: opts.port,
    inProcess: opts.inProcess,
    log: opts.log,
  });
  const close = async () => {
    player.close();
    await server.close();
  };
  return { name: "auth", url: server.url, port: server.port, setServing: server.setServing, close };
}
