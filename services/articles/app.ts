// Starts the articles service on its own Connect port.
import { Code, ConnectError, type Client, type Interceptor } from "@connectrpc/connect";
import { ArticlesService } from "../../gen/articles/v1/articles_pb.js";
import type { AuthService } from "../../gen/auth/v1/auth_pb.js";
import type { JobBus } from "../../lib/bus/port.js";
import type { Logger } from "../../lib/log.js";
import { createCallerResolver } from "../../lib/rpc/caller.js";
import { startRpcServer } from "../../lib/rpc/server.js";
import type { RunningService } from "../../lib/service.js";
import { startReconciler } from "./reconciler.js";
import { createArticlesHandlers } from "./service.js";
import type { ArticleStore } from "./store/port.js";

export interface ArticlesServiceOptions {
  store: ArticleStore;
  bus: JobBus;
  auth: Client<typeof AuthService>;
  internalToken: string;
  audioBaseUrl: string;
  log: Logger;
  host?: string;
  port?: number;
  /** false turns the reconciler off (tests that count publishes). */
  reconcile?: { intervalMs?: number; staleMs?: number } | false;
  /** How long a resolved publisher token is reused; default 5 s. */
  callerTtlMs?: number;
}

/** Unexpected failures (a store outage, a bug) reach the caller as a plain Internal error; details stay in the log. */
function hideInternalErrors(log: Logger): Interceptor {
  return (next) => async (req) => {
    try {
      return await next(req);
    } catch (err) {
      if (err instanceof ConnectError) throw err;
      log.error({ err, procedure: req.method.name }, "articles call failed");
      throw new ConnectError("Internal error in the articles service", Code.Internal);
    }
  };
}

export async function startArticlesService(opts: ArticlesServiceOptions): Promise<RunningService> {
  if (!opts.internalToken) throw new Error("startArticlesService: internalToken is required");
  const resolveCaller = createCallerResolver({ auth: opts.auth, internalToken: opts.internalToken, ttlMs: opts.callerTtlMs });
  const handlers = createArticlesHandlers({ store: opts.store, bus: opts.bus, resolveCaller, audioBaseUrl: opts.audioBaseUrl, log: opts.log });

  const server = await startRpcServer({
    name: "articles",
    services: [ArticlesService.typeName],
    routes: (router) => router.service(ArticlesService, handlers),
    host: opts.host,
    port: opts.port,
    log: opts.log,
    interceptors: [hideInternalErrors(opts.log)],
  });

  const reconciler = opts.reconcile === false ? undefined : startReconciler({ store: opts.store, bus: opts.bus, log: opts.log, ...opts.reconcile });

  return {
    name: "articles",
    url: server.url,
    port: server.port,
    setServing: server.setServing,
    async close() {
      server.setServing(false);
      await reconciler?.stop();
      await server.close();
    },
  };
}
