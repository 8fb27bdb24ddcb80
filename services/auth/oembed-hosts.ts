// Verified oEmbed hosts. A project's claim on a host answers oEmbed only
// once the project has shown it controls the site: the host serves
// /.well-known/article-audio.txt listing the project's public player key.
// Claims are checked when the publisher saves or asks, and again every
// OEMBED_RECHECK_HOURS by whichever auth replica leases the claim first; a
// verified claim whose checks keep failing for OEMBED_GRACE_HOURS is dropped.
// One project at most holds a host's verification (the store's unique index);
// unverified claims block nobody.
import { setMaxListeners } from "node:events";
import type { Logger } from "../../lib/log.js";
import { createMemoryBucketStore } from "../../lib/ratelimit/memory.js";
import { portOf } from "../../lib/net/allow-list.js";
import { FetchLimitError, safeFetch, UnsafeUrlError, type SafeFetchOptions } from "../../lib/net/safe-fetch.js";
import { normaliseOembedHost, storedPlayerSettings } from "./player-settings.js";
import type { AuthStore, OembedClaim, PlayerRecord } from "./store/port.js";

export const WELL_KNOWN_PATH = "/.well-known/article-audio.txt";

/** Read by the auth service (and the embedded default). */
export const OEMBED_VARS = {
  OEMBED_RECHECK_HOURS: { type: "number", minimum: 0.0001, maximum: 8760, default: 24, description: "verified oEmbed hosts are checked again this often (each host's /.well-known/article-audio.txt)" },
  OEMBED_GRACE_HOURS: { type: "number", minimum: 0, maximum: 8760, default: 72, description: "a verified oEmbed host whose checks keep failing this long loses its verification" },
} as const;

const HOUR_MS = 3_600_000;
const FILE_MAX_BYTES = 64 * 1024;
const FETCH_TIMEOUT_MS = 5_000;
/** While a verified claim fails within its grace, it is retried this often (or on the regular interval when shorter). */
const RETRY_MS = HOUR_MS;
/** How long a replica owns a due claim it leased; a crashed replica's lease simply runs out. */
const LEASE_MS = 5 * 60_000;
const DUE_BATCH = 50;
const PARALLEL_CHECKS = 4;
/**
 * Checks a publisher may ask for (saves, verify), per project and auth
 * replica: every host of a full list at once, a minute's worth again after
 * that. Bounds the fetches one tenant can make the platform send.
 */
const ASKED_CHECKS = { perSecond: 1, burst: 60 };
/** A save or verify request waits this long for its checks; slower ones finish in the background (state "pending"). */
export const DEFAULT_ANSWER_BUDGET_MS = 8_000;

export interface OembedVerifierOptions {
  store: AuthStore;
  log: Logger;
  /** The project's public key, made if it has none yet (player.ts). */
  keyOf: (r: PlayerRecord) => Promise<string>;
  recheckMs?: number;
  graceMs?: number;
  /** FETCH_ALLOW_PRIVATE: the private hosts the check may reach; these may also be checked over plain http. */
  fetch?: Pick<SafeFetchOptions, "allowPrivate" | "resolve">;
  answerBudgetMs?: number;
  now?: () => number;
}

export type OembedVerifierConfig = Pick<OembedVerifierOptions, "recheckMs" | "graceMs" | "fetch">;

export function oembedVerifierConfig(cfg: { OEMBED_RECHECK_HOURS: number; OEMBED_GRACE_HOURS: number }, fetch?: OembedVerifierOptions["fetch"]): OembedVerifierConfig {
  return { recheckMs: cfg.OEMBED_RECHECK_HOURS * HOUR_MS, graceMs: cfg.OEMBED_GRACE_HOURS * HOUR_MS, fetch };
}

export interface OembedVerifier {
  /** The project's claims in `hosts` order, after making the stored claims match the settings. */
  claims(projectId: string, hosts: string[]): Promise<OembedClaim[]>;
  /**
   * Checks the given claims now (all when `only` is unset), waiting at most
   * the answer budget. Claims beyond the project's allowance of asked-for
   * checks keep their state (the scheduler gets to pending ones); when none
   * could be checked, `refusedMs` says when one can be asked for again.
   */
  checkNow(r: PlayerRecord, hosts: string[], only?: (c: OembedClaim) => boolean): Promise<{ refusedMs: number }>;
  /** Starts the periodic re-checks (this replica's share of them). */
  start(): void;
  stop(): void;
}

type Outcome = { ok: true } | { ok: false; reason: string };

/** The URLs a host's file is looked for at: https, then http for hosts the operator allow-listed as private. */
function fileUrls(host: string, fetchOpts: OembedVerifierOptions["fetch"]): string[] {
  const https = `https://${host}${WELL_KNOWN_PATH}`;
  const plain = new URL(`http://${host}${WELL_KNOWN_PATH}`);
  // A host the operator lets us reach although private (a test's loopback server, an intranet site) often has no TLS.
  return fetchOpts?.allowPrivate?.(plain.hostname, plain.hostname, portOf(plain)) ? [https, plain.href] : [https];
}

/** A reason a publisher can act on; the library's own text (OpenSSL's, say) is rarely one. */
function whyFailed(e: unknown): string {
  if (e instanceof UnsafeUrlError || e instanceof FetchLimitError) return e.message;
  const code = (e as NodeJS.ErrnoException)?.code ?? "";
  if (code === "ECONNREFUSED") return "connection refused";
  if (code === "ECONNRESET") return "connection reset";
  if (code === "EPROTO" || code.startsWith("ERR_SSL")) return `TLS handshake failed (${code})`;
  if (/CERT|SIGNATURE|ALTNAME/.test(code)) return `TLS certificate not accepted (${code})`;
  return code || String((e as Error)?.message ?? e);
}

/** Fetches the host's file and looks for `key` on a line of its own. */
export async function checkOembedHost(host: string, key: string, fetchOpts: OembedVerifierOptions["fetch"], signal?: AbortSignal): Promise<Outcome> {
  const reasons: string[] = [];
  const urls = fileUrls(host, fetchOpts);
  for (const url of urls) {
    try {
      const res = await safeFetch(url, { ...fetchOpts, timeoutMs: FETCH_TIMEOUT_MS, maxBytes: FILE_MAX_BYTES, maxRedirects: 3, signal });
      // A redirect may upgrade the scheme or change the path, not leave the host (name and port): another site's file proves nothing about this one.
      const final = new URL(res.url);
      if (normaliseOembedHost(final.host) !== host) reasons.push(`${url}: redirected to another host (${final.host})`);
      else if (final.protocol === "http:" && urls.length === 1) reasons.push(`${url}: redirected to plain http`);
      else if (res.status !== 200) reasons.push(`${url}: answered ${res.status}`);
      else if (!res.body.toString("utf8").split(/\r?\n/).some((line) => line.trim() === key)) reasons.push(`${url}: does not list this project's public player key`);
      else return { ok: true };
    } catch (e) {
      if (signal?.aborted) throw e;
      reasons.push(`${url}: ${whyFailed(e)}`);
    }
  }
  return { ok: false, reason: reasons.join("; ") };
}

export function createOembedVerifier(opts: OembedVerifierOptions): OembedVerifier {
  const { store, log, keyOf } = opts;
  const now = opts.now ?? Date.now;
  const recheckMs = opts.recheckMs ?? 24 * HOUR_MS;
  const graceMs = opts.graceMs ?? 72 * HOUR_MS;
  const budgetMs = opts.answerBudgetMs ?? DEFAULT_ANSWER_BUDGET_MS;
  const stopping = new AbortController();
  // Every check in flight listens to it.
  setMaxListeners(0, stopping.signal);
  // One check per claim at a time in this process; a second asker shares it.
  const inFlight = new Map<string, Promise<void>>();
  const asked = createMemoryBucketStore({ now, maxKeys: 10_000 });
  let timer: NodeJS.Timeout | undefined;
  let ticking = false;

  /** What the claim becomes after a check. */
  function next(c: OembedClaim, outcome: Outcome | { ok: false; taken: true }, at: number): OembedClaim {
    const checkedAt = new Date(at);
    if (outcome.ok) return { ...c, status: "verified", reason: null, checkedAt, verifiedAt: checkedAt, failingSince: null, nextCheckMs: at + recheckMs };
    const reason = "taken" in outcome ? "verified by another project" : outcome.reason;
    const failingSince = c.failingSince ?? checkedAt;
    if (c.status === "verified" && at - failingSince.getTime() < graceMs) {
      return { ...c, reason, checkedAt, failingSince, nextCheckMs: at + Math.min(recheckMs, RETRY_MS) };
    }
    return { ...c, status: "failed", reason, checkedAt, failingSince, nextCheckMs: at + recheckMs };
  }

  async function runCheck(projectId: string, host: string, key: string): Promise<void> {
    const outcome = await checkOembedHost(host, key, opts.fetch, stopping.signal);
    // The state as it is now, not as it was when the check began: another check may have changed it meanwhile.
    const c = (await store.listOembedClaims(projectId)).find((x) => x.host === host);
    if (!c) return;
    const at = now();
    let after = next(c, outcome, at);
    let saved = await store.saveOembedCheck(after);
    if (saved === "taken") {
      after = next(c, { ok: false, taken: true }, at);
      saved = await store.saveOembedCheck(after);
    }
    if (saved === "gone") return;
    if (after.status !== c.status) log.info({ projectId, host, status: after.status, reason: after.reason ?? undefined }, "oEmbed host verification changed");
  }

  /**
   * One check per claim at a time in this process. A periodic check joins one
   * in flight; an asked-for one (`fresh`) runs after it, so it sees the file
   * as it is now.
   */
  function check(c: OembedClaim, key: string, fresh: boolean): Promise<void> {
    const id = `${c.projectId}/${c.host}`;
    const prior = inFlight.get(id);
    if (prior && !fresh) return prior;
    const p: Promise<void> = (prior ?? Promise.resolve())
      .then(() => runCheck(c.projectId, c.host, key))
      .catch((err) => {
        if (!stopping.signal.aborted) log.warn({ err, projectId: c.projectId, host: c.host }, "oEmbed host check failed to complete");
      })
      .finally(() => {
        if (inFlight.get(id) === p) inFlight.delete(id);
      });
    inFlight.set(id, p);
    return p;
  }

  async function claims(projectId: string, hosts: string[]): Promise<OembedClaim[]> {
    let stored = await store.listOembedClaims(projectId);
    const missing = hosts.filter((h) => !stored.some((c) => c.host === h));
    const extra = stored.some((c) => !hosts.includes(c.host));
    if (extra) await store.removeOembedClaims(projectId, hosts);
    for (const h of missing) await store.addOembedClaim(projectId, h, now());
    if (extra || missing.length > 0) stored = await store.listOembedClaims(projectId);
    return hosts.map((h) => stored.find((c) => c.host === h)).filter((c): c is OembedClaim => c !== undefined);
  }

  async function checkNow(r: PlayerRecord, hosts: string[], only?: (c: OembedClaim) => boolean): Promise<{ refusedMs: number }> {
    const todo = (await claims(r.project.id, hosts)).filter((c) => !only || only(c));
    if (todo.length === 0) return { refusedMs: 0 };
    const allowance = await asked.take(r.project.id, todo.length, ASKED_CHECKS);
    if (allowance.granted === 0) return { refusedMs: Math.max(1000, allowance.retryAfterMs) };
    const key = await keyOf(r);
    const all = Promise.all(todo.slice(0, allowance.granted).map((c) => check(c, key, true)));
    let timeout: NodeJS.Timeout | undefined;
    await Promise.race([all, new Promise<void>((resolve) => (timeout = setTimeout(resolve, budgetMs)))]);
    clearTimeout(timeout);
    return { refusedMs: 0 };
  }

  /** One leased claim: checked if its project still claims the host, else deleted. */
  async function recheck(c: OembedClaim): Promise<void> {
    const r = await store.getPlayer(c.projectId);
    const hosts = r ? storedPlayerSettings(r.settings).oembed.hosts : [];
    if (!r || !hosts.includes(c.host)) {
      await store.removeOembedClaims(c.projectId, hosts);
      return;
    }
    await check(c, await keyOf(r), false);
  }

  async function tick(): Promise<void> {
    if (ticking) return;
    ticking = true;
    try {
      const at = now();
      const due = await store.dueOembedClaims(at, DUE_BATCH);
      const mine: OembedClaim[] = [];
      for (const c of due) if (await store.leaseOembedCheck(c.projectId, c.host, c.nextCheckMs, at + LEASE_MS)) mine.push(c);
      for (let i = 0; i < mine.length && !stopping.signal.aborted; i += PARALLEL_CHECKS) {
        await Promise.all(mine.slice(i, i + PARALLEL_CHECKS).map((c) => recheck(c).catch((err) => log.warn({ err, projectId: c.projectId, host: c.host }, "oEmbed host re-check failed"))));
      }
    } catch (err) {
      if (!stopping.signal.aborted) log.warn({ err }, "oEmbed host re-checks failed; trying again later");
    } finally {
      ticking = false;
    }
  }

  /** Claims made before verification existed (settings only): created once, so the scheduler checks them. */
  async function adoptUnrecordedClaims(): Promise<void> {
    for (const p of await store.listProjects()) {
      const r = await store.getPlayer(p.id);
      const hosts = r ? storedPlayerSettings(r.settings).oembed.hosts : [];
      if (hosts.length > 0) await claims(p.id, hosts);
    }
  }

  return {
    claims,
    checkNow,
    start() {
      if (timer) return;
      const everyMs = Math.max(250, Math.min(60_000, recheckMs / 4));
      adoptUnrecordedClaims()
        .catch((err) => log.warn({ err }, "could not record older oEmbed host claims"))
        .finally(() => {
          if (stopping.signal.aborted) return;
          void tick();
          timer = setInterval(() => void tick(), everyMs);
          timer.unref();
        });
    },
    stop() {
      stopping.abort(new Error("auth service stopping"));
      clearInterval(timer);
    },
  };
}
