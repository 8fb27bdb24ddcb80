// Starts the articles service on its own Connect port.
import { Code, ConnectError, type Client, type Interceptor } from "@connectrpc/connect";
import { ArticlesService } from "../../gen/articles/v1/articles_pb.js";
import type { AuthService } from "../../gen/auth/v1/auth_pb.js";
import type { JobBus } from "../../lib/bus/port.js";
import type { Logger } from "../../lib/log.js";
import { createCallerResolver } from "../../lib/rpc/caller.js";
import { startRpcServer } from "../../lib/rpc/server.js";
import type { RunningService } from "../../lib/service.js";
import type { SafeFetchOptions } from "../../lib/net/safe-fetch.js";
import type { Admission } from "./admission/admit.js";
import { startAdmissionScheduler } from "./admission/scheduler.js";
import { authSettingsSource, unboundedSettings } from "./admission/settings.js";
import { createStatusEmitter } from "./events/publish.js";
import { createWebhookDispatcher } from "./events/webhook.js";
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
  /** Callers in this process skip the socket (the embedded default; see lib/rpc/in-process.ts). */
  inProcess?: boolean;
  /** false turns the reconciler off (tests that count publishes). */
  reconcile?: { intervalMs?: number; staleMs?: number } | false;
  /** How long a resolved publisher token is reused; default 5 s. */
  callerTtlMs?: number;
  /**
   * An auth client that sends the internal token: project settings, daily
   * limits, credit and webhooks come from it. Absent: every project is
   * unbounded, has no rules and no webhook.
   */
  settingsFrom?: Client<typeof AuthService>;
  /** Deferred-article retry and periodic recrawl periods. */
  schedule?: { deferredEveryMs?: number; recrawlEveryMs?: number } | false;
  /** Overrides for outbound fetches (tests allow loopback receivers). */
  fetchOptions?: SafeFetchOptions;
  /** Webhook retry policy; defaults in events/webhook.ts. */
  webhook?: { retries?: number; backoffMs?: number[] };
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

/** FETCH_ALLOW_PRIVATE → safeFetch options: only the listed hosts or addresses may be private. */
export function privateAllowList(list: string | undefined): SafeFetchOptions | undefined {
  const allowed = new Set((list ?? "").split(",").map((h) => h.trim().toLowerCase()).filter(Boolean));
  if (allowed.size === 0) return undefined;
  return { allowPrivate: (host, address) => allowed.has(host.toLowerCase()) || allowed.has(address) };
}

export async function startArticlesService(opts: ArticlesServiceOptions): Promise<RunningService> {
  if (!opts.internalToken) throw new Error("startArticlesService: internalToken is required");
  const resolveCaller = createCallerResolver({ auth: opts.auth, internalToken: opts.internalToken, ttlMs: opts.callerTtlMs });
  const settings = opts.settingsFrom ? authSettingsSource(opts.settingsFrom) : unboundedSettings();
  const webhooks = opts.settingsFrom
    ? createWebhookDispatcher({ log: opts.log, fetchOptions: opts.fetchOptions, retries: opts.webhook?.retries, backoffMs: opts.webhook?.backoffMs })
    : undefined;
  const emit = createStatusEmitter({ bus: opts.bus, settings, webhooks, log: opts.log });
  let admission: Admission | undefined;
  const handlers = createArticlesHandlers({
    store: opts.store,
    bus: opts.bus,
    resolveCaller,
    audioBaseUrl: opts.audioBaseUrl,
    log: opts.log,
    settings,
    emit,
    recrawlFetch: opts.fetchOptions,
    onAdmission: (a) => (admission = a),
  });

  const server = await startRpcServer({
    name: "articles",
    services: [ArticlesService.typeName],
    routes: (router) => router.service(ArticlesService, handlers),
    host: opts.host,
    port: opts.port,
    inProcess: opts.inProcess,
    log: opts.log,
    interceptors: [hideInternalErrors(opts.log)],
  });

  // Content threads start now (in the background), not on the first article that needs one.
  admission!.content.warm();
  const admit = (a: { id: string; revision: number }) => admission!.admit(a.id, a.revision);
  const reconciler = opts.reconcile === false ? undefined : startReconciler({ store: opts.store, bus: opts.bus, log: opts.log, admit, ...opts.reconcile });
  const scheduler =
    opts.schedule === false
      ? undefined
      : startAdmissionScheduler({
          admission: admission!,
          recrawl: { store: opts.store, admission: admission!, settings, emit, log: opts.log, fetchOptions: opts.fetchOptions },
          log: opts.log,
          ...opts.schedule,
        });

  return {
    name: "articles",
    url: server.url,
    port: server.port,
    setServing: server.setServing,
    async close() {
      server.setServing(false);
      await reconciler?.stop();
      await scheduler?.stop();
      await admission?.close();
      await webhooks?.close();
      await server.close();
    },
  };
}
