// Per-project rate limits on the REST API: one token bucket for reads (GET,
// HEAD) and one for writes, per project, whatever token of the project is
// used. The project comes from the same cached token lookup the services use
// (lib/rpc/caller.ts); its limits from its settings (`rateLimit`), cached
// here. A refusal is a 429 ErrorResult with Retry-After; every limited
// response carries the RateLimit-Policy and RateLimit fields of
// draft-ietf-httpapi-ratelimit-headers (docs/limits.md).
//
// The limit runs as the first middleware of every limited route, after the
// router chose it (limitRoutes): the router matches paths case-insensitively
// and with or without a trailing slash, so any test on the request's own
// spelling of the path would miss some of the ways to reach a route.
import { Code, ConnectError, type Client } from "@connectrpc/connect";
import type { Router, RouterMiddleware } from "@koa/router";
import type { Context, Next } from "koa";
import type { AuthService } from "../gen/auth/v1/auth_pb.js";
import type { RateLimitSettings } from "../lib/project-settings.js";
import type { CallerResolver } from "../lib/rpc/caller.js";
import type { Decision, RateLimiter } from "../lib/ratelimit/limiter.js";
import type { BucketPolicy } from "../lib/ratelimit/port.js";
import { HttpError } from "./errors.js";
import { mergeLimits, projectBucketKey, type LimitClass, type ProjectLimits } from "../lib/ratelimit/project-limits.js";

export { DEFAULT_LIMITS, mergeLimits, projectBucketKey, type LimitClass, type ProjectLimits } from "../lib/ratelimit/project-limits.js";

export interface RateLimitMiddlewareOptions {
  limiter: RateLimiter;
  resolveCaller: CallerResolver;
  /** The project's limits; see projectLimitsFromSettings. A cached answer may come without a promise. */
  limitsOf: (projectId: string) => ProjectLimits | Promise<ProjectLimits>;
}

/** Routes under /api that are not the publisher API: the docs and the OpenAPI document (route templates, as registered). */
const EXEMPT_ROUTE = /^\/api(\/docs(\/.*)?|\/openapi\.json)?$/;

/** Routes that count their own work in their own bucket instead of one request (importPacer). */
export const SELF_PACED_ROUTES: ReadonlySet<string> = new Set(["/api/articles/import"]);

/** Whether a route, by the template it was registered with, is counted: the publisher API. */
export function isLimitedRoute(template: string | RegExp): boolean {
  return typeof template === "string" && template.startsWith("/api/") && !EXEMPT_ROUTE.test(template);
}

/**
 * Puts `limit` in front of the handlers of every limited route, so it counts
 * the route a request reached however its path was spelled. Call once every
 * route is registered.
 */
export function limitRoutes(router: Router, limit: RouterMiddleware): void {
  for (const layer of router.stack) {
    if (layer.methods.length > 0 && isLimitedRoute(layer.path) && !SELF_PACED_ROUTES.has(layer.path as string)) layer.stack.unshift(limit);
  }
}

export function limitClassOf(method: string): Exclude<LimitClass, "imports"> | null {
  if (method === "GET" || method === "HEAD") return "reads";
  if (method === "POST" || method === "PUT" || method === "PATCH" || method === "DELETE") return "writes";
  return null;
}

/** Structured-field policy and state, as in draft-ietf-httpapi-ratelimit-headers-10/-11. */
export function rateLimitHeaders(cls: LimitClass, p: BucketPolicy, remaining: number, resetMs: number): Record<string, string> {
  // A bucket of `burst` refilled at `perSecond` is a quota of `burst` per the time it takes to refill.
  const window = Math.max(1, Math.ceil(p.burst / p.perSecond));
  return {
    "RateLimit-Policy": `"${cls}";q=${p.burst};w=${window}`,
    RateLimit: `"${cls}";r=${Math.max(0, Math.floor(remaining))};t=${Math.ceil(Math.max(0, resetMs) / 1000)}`,
  };
}

/**
 * The hot path skips hashing and the resolver for a header seen in the last
 * second (the resolver's own cache is 5 s, so revocation is no slower).
 */
const RECENT_MS = 1_000;
const RECENT_MAX = 10_000;

/** Marks a request already counted: a property of its context, not a WeakSet entry per request (weak entries cost the collector). */
const COUNTED = Symbol("rate limit counted");

export function rateLimitMiddleware(opts: RateLimitMiddlewareOptions) {
  // projectId null: the internal token; false: a token the auth service refused (not counted, the route answers 401).
  const recent = new Map<string, { projectId: string | null | false; until: number }>();

  const projectOf = async (authorization: string): Promise<string | null | false> => {
    let projectId: string | null | false;
    try {
      // The resolver reads one header; no need to build a Headers object per request.
      const caller = await opts.resolveCaller({ get: () => authorization } as unknown as Headers);
      projectId = caller.kind === "publisher" ? caller.projectId : null;
    } catch (e) {
      if (ConnectError.from(e).code !== Code.Unauthenticated) throw e;
      projectId = false;
    }
    if (recent.size >= RECENT_MAX) recent.clear();
    recent.set(authorization, { projectId, until: Date.now() + RECENT_MS });
    return projectId;
  };

  const refusal = (cls: LimitClass, policy: BucketPolicy, d: Decision): HttpError => {
    const seconds = Math.max(1, Math.ceil(d.retryAfterMs / 1000));
    return new HttpError(
      429,
      `Too many ${cls} for this project: the limit is ${policy.perSecond}/s with bursts of ${policy.burst}; retry after ${seconds} s`,
      { ...rateLimitHeaders(cls, policy, 0, d.retryAfterMs), "Retry-After": String(seconds) },
    );
  };

  // Every step answers from memory on the hot path (a token seen within the second, cached limits, a
  // local lease or in-process bucket), so a counted request usually costs no promise of its own.
  return (ctx: Context & { [COUNTED]?: true }, next: Next): Promise<void> => {
    const cls = limitClassOf(ctx.method);
    const authorization = ctx.get("Authorization");
    // Only authenticated API calls are counted; a missing or bad token is the route's 401.
    if (!cls || !authorization || ctx[COUNTED]) return next();
    ctx[COUNTED] = true;
    const hit = recent.get(authorization);
    if (hit && hit.until > Date.now()) return limited(ctx, next, cls, hit.projectId);
    return projectOf(authorization).then((projectId) => limited(ctx, next, cls, projectId));
  };

  function limited(ctx: Context, next: Next, cls: LimitClass, projectId: string | null | false): Promise<void> {
    // The internal token is not a project; a refused token gets its 401 from the route.
    if (projectId === null || projectId === false) return next();
    const limits = opts.limitsOf(projectId);
    if (limits instanceof Promise) return limits.then((l) => counted(ctx, next, cls, projectId, l[cls]));
    return counted(ctx, next, cls, projectId, limits[cls]);
  }

  function counted(ctx: Context, next: Next, cls: LimitClass, projectId: string, policy: BucketPolicy): Promise<void> {
    const key = projectBucketKey(projectId, cls);
    const d = opts.limiter.takeNow(key, policy);
    if (!d) return opts.limiter.take(key, policy).then((later) => admit(ctx, next, cls, policy, later));
    return admit(ctx, next, cls, policy, d);
  }

  function admit(ctx: Context, next: Next, cls: LimitClass, policy: BucketPolicy, d: Decision): Promise<void> {
    if (!d.allowed) return Promise.reject(refusal(cls, policy, d));
    ctx.set(rateLimitHeaders(cls, policy, d.remaining, d.fullInMs));
    return next();
  }
}

export interface ImportPace {
  /** Waits until the project's import bucket has `count` more lines; an import slows down rather than failing lines. */
  pace(count: number): Promise<void>;
  /** RateLimit-Policy of the bucket, for the answer's headers. */
  headers: Record<string, string>;
}

/**
 * The import bucket of the token's project, counted per line sent to the
 * service. Undefined for the internal token (not a project).
 */
export function importPacer(opts: RateLimitMiddlewareOptions) {
  return async (authorization: string, signal?: AbortSignal): Promise<ImportPace | undefined> => {
    const caller = await opts.resolveCaller({ get: () => authorization } as unknown as Headers);
    if (caller.kind !== "publisher") return undefined;
    const { projectId } = caller;
    const key = projectBucketKey(projectId, "imports");
    const first = (await opts.limitsOf(projectId)).imports;
    return {
      headers: { "RateLimit-Policy": rateLimitHeaders("imports", first, 0, 0)["RateLimit-Policy"] },
      async pace(count) {
        const policy = (await opts.limitsOf(projectId)).imports;
        for (let i = 0; i < count && !signal?.aborted; i++) {
          for (;;) {
            const d = await opts.limiter.take(key, policy);
            if (d.allowed || signal?.aborted) break;
            await new Promise((resolve) => setTimeout(resolve, d.retryAfterMs));
          }
        }
      },
    };
  };
}

export interface SettingsLimitsOptions {
  /** GetProjectSettings with the internal token. */
  auth: Client<typeof AuthService>;
  defaults: ProjectLimits;
  /** How long a project's limits are reused; a settings change takes effect after this. */
  ttlMs?: number;
  onError?: (err: unknown) => void;
  maxEntries?: number;
}

/**
 * Limits from the project's settings, cached: a hit costs a map lookup; a
 * stale entry is answered at once and refreshed behind it. When the auth
 * service cannot say, the defaults apply for a short while.
 */
export function projectLimitsFromSettings(opts: SettingsLimitsOptions): (projectId: string) => ProjectLimits | Promise<ProjectLimits> {
  const ttl = opts.ttlMs ?? 30_000;
  const max = opts.maxEntries ?? 10_000;
  const cache = new Map<string, { limits: ProjectLimits; expires: number; refreshing?: Promise<ProjectLimits> }>();

  const load = (projectId: string): Promise<ProjectLimits> =>
    opts.auth
      .getProjectSettings({ projectId })
      .then((r) => mergeLimits(opts.defaults, (JSON.parse(r.settings?.settingsJson ?? "{}") as { rateLimit?: RateLimitSettings }).rateLimit))
      .then(
        (limits) => {
          if (!cache.has(projectId) && cache.size >= max) cache.delete(cache.keys().next().value as string);
          cache.set(projectId, { limits, expires: Date.now() + ttl });
          return limits;
        },
        (err: unknown) => {
          opts.onError?.(err);
          const limits = cache.get(projectId)?.limits ?? opts.defaults;
          cache.set(projectId, { limits, expires: Date.now() + Math.min(ttl, 5_000) });
          return limits;
        },
      );

  return (projectId) => {
    const hit = cache.get(projectId);
    if (!hit) {
      const first = load(projectId);
      cache.set(projectId, { limits: opts.defaults, expires: 0, refreshing: first });
      return first;
    }
    if (hit.refreshing && hit.expires === 0) return hit.refreshing;
    if (hit.expires <= Date.now() && !hit.refreshing) {
      hit.refreshing = load(projectId);
    }
    return hit.limits;
  };
}
