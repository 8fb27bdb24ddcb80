// Admission: what happens to a stored revision before any synthesis. In order:
// parse (when asked) → classify → the project's rules → reserve one unit of
// the daily limit and the characters from the balance → publish the job.
// Each outcome is a real status (parsed, rejected, limit_reached, no_money)
// with its reason recorded. A lease on the revision keeps the create path,
// the reconciler and the deferred sweep from admitting it twice, and a
// reservation whose revision was superseded meanwhile is given back.
// Parsing and classification run in the content pool's worker threads, under
// hard limits; content that breaks one is rejected (rule `content`) once,
// and stays rejected: it is no longer pending, so nothing retries it.
import type { Logger } from "../../../lib/log.js";
import { rulesForLang } from "../../../lib/pronunciations.js";
import { requestIdFields } from "../../../lib/rpc/request-id.js";
import { SCORE_THRESHOLD } from "../content/classify.js";
import { ContentRejectedError } from "../content/limits.js";
import { createContentPool, type ContentWork } from "../content/pool.js";
import type { StatusEmitter } from "../events/publish.js";
import { DEFERRED_STATUSES, type AdmissionResult, type ArticleStore, type StoredArticle } from "../store/port.js";
import { checkRules } from "./rules.js";
import type { ProjectSettingsSource } from "./settings.js";

export interface AdmissionDeps {
  store: ArticleStore;
  settings: ProjectSettingsSource;
  /** `requestId`: of the publisher's call that led here, carried by the job to the worker. */
  publish(a: StoredArticle, requestId?: string): Promise<void>;
  emit: StatusEmitter;
  log: Logger;
  /** How long one run may hold a revision before another may retry it; default 60 s. */
  leaseMs?: number;
  /** Where parsing and classification run; default: a pool of its own (closed by close()). */
  content?: ContentWork;
}

export interface Admission {
  /** Admits one pending revision; null when it is not pending, held by another run, or superseded. */
  admit(id: string, revision: number, requestId?: string): Promise<StoredArticle | null>;
  /** Re-admits deferred articles oldest first; per project it stops at the first that has to wait again. Returns how many went through. */
  readmitDeferred(projectId?: string): Promise<number>;
  /** The worker threads content work runs in (recrawl extracts there too). */
  readonly content: ContentWork;
  close(): Promise<void>;
}

/** What was spoken for an admitted revision: crawled text, parsed HTML's text, or the text as sent. */
export function spokenTextOf(a: Pick<StoredArticle, "text" | "spokenText" | "crawledText">): string {
  return a.crawledText ?? a.spokenText ?? a.text;
}

/** What the create path uses on top: admitting a revision stored with its lease already held. */
export interface HeldAdmission extends Admission {
  /**
   * Admits a revision that was stored with its lease already held
   * (`admittingUntil: leaseUntil()`), which saves the create path the claim's
   * round trip to the store.
   */
  admitHeld(a: StoredArticle, requestId?: string): Promise<StoredArticle | null>;
  /** The lease end for a revision stored as held (epoch ms). */
  leaseUntil(now?: Date): number;
}

/** Characters debited for an article: everything that will be spoken, title included. */
export const spokenChars = (title: string, body: string) => title.length + body.length;

const isDeferred = (s: string) => (DEFERRED_STATUSES as readonly string[]).includes(s);

export function createAdmission(deps: AdmissionDeps): HeldAdmission {
  const { store, settings, log } = deps;
  const leaseMs = deps.leaseMs ?? 60_000;
  const ownPool = deps.content === undefined;
  const content = deps.content ?? createContentPool();

  async function finish(a: StoredArticle, result: AdmissionResult): Promise<StoredArticle | null> {
    const done = await store.finishAdmission(a.id, a.revision, result);
    if (done && done.status !== a.status) deps.emit(done);
    return done;
  }

  async function admit(id: string, revision: number, requestId?: string): Promise<StoredArticle | null> {
    const a = await store.claimAdmission(id, revision, leaseMs);
    if (!a) return null;
    return decide(a, requestId);
  }

  async function decide(a: StoredArticle, requestId?: string): Promise<StoredArticle | null> {
    const project = await settings.get(a.projectId);
    let analysis;
    try {
      analysis = await content.analyse(a.projectId, { title: a.title, text: a.text, lang: a.lang, parse: a.parse, url: a.url, crawledText: a.crawledText });
    } catch (err) {
      // Anything else (a busy or closed pool) is no verdict: the article stays pending for the next attempt.
      if (!(err instanceof ContentRejectedError)) throw err;
      log.info({ articleId: a.id, projectId: a.projectId, revision: a.revision, rule: "content", detail: err.reason, ...requestIdFields(requestId) }, "article rejected");
      const decision = { rule: "content", detail: err.reason, at: new Date().toISOString() };
      return finish(a, { status: "rejected", types: [], decision, keepPending: false });
    }
    const { spoken, scores } = analysis;
    const spokenText = spoken !== a.text ? spoken : undefined;
    const types = scores.filter((t) => t.score >= SCORE_THRESHOLD).sort((x, y) => y.score - x.score).map(({ name, score }) => ({ name, score }));
    const at = new Date().toISOString();

    const failed =
      spoken.trim() === ""
        ? { rule: "content", detail: "no readable text found in the article" }
        : checkRules(project.rules, { text: spoken, url: a.url, labels: a.labels, lang: a.lang, types: scores });
    if (failed) {
      log.info({ articleId: a.id, projectId: a.projectId, revision: a.revision, rule: failed.rule, detail: failed.detail, ...requestIdFields(requestId) }, "article rejected");
      return finish(a, { status: "rejected", types, spokenText, decision: { ...failed, at }, keepPending: false });
    }

    // The rules as they are now go with the revision: a later change of the list applies to
    // articles admitted after it, never to audio already queued or made. Read before the
    // reservation, so a failed read leaves nothing to give back.
    const rules = rulesForLang(await store.getPronunciations(a.projectId), a.lang);
    const pronunciations = rules.length ? rules : undefined;
    // The loudness target likewise: retries and re-renders of this revision keep it.
    const loudness = project.loudness && Object.keys(project.loudness).length ? { ...project.loudness } : undefined;

    const chars = spokenChars(a.title, spoken);
    const reservation = await settings.reserve(a.projectId, chars);
    const outcome = reservation.outcome;
    if (reservation.outcome !== "reserved") {
      const decision =
        outcome === "limit_reached"
          ? { rule: "dailyLimit", detail: `the project's daily limit of ${project.dailyLimit ?? "?"} articles is used up for today (UTC)`, at }
          : { rule: "creditChars", detail: `needs ${chars} characters; the balance is lower`, at };
      if (a.status !== outcome) log.info({ articleId: a.id, projectId: a.projectId, revision: a.revision, chars, ...requestIdFields(requestId) }, `article waits: ${outcome}`);
      return finish(a, { status: reservation.outcome, types, spokenText, decision, keepPending: true });
    }

    const reservedChars = reservation.debited && chars > 0 ? chars : undefined;
    // Text read from its page (create from a URL) stays parsed, as HTML the publisher sent does.
    const status = spokenText !== undefined || a.status === "parsed" ? "parsed" : "waiting";
    const done = await finish(a, { status, types, spokenText, reservedChars, keepPending: false, pronunciations, loudness });
    if (!done) {
      // Superseded or deleted while we reserved: the characters were never used.
      if (reservedChars) await settings.refund(a.projectId, reservedChars);
      return null;
    }
    await deps.publish(done, requestId);
    return done;
  }

  async function readmitDeferred(projectId?: string): Promise<number> {
    const blocked = new Set<string>();
    let admitted = 0;
    // A project that has to wait again is excluded from the next page, so one
    // project's long backlog never hides the others'. Bounded: the sweep runs again.
    for (let pageNo = 0; pageNo < 20; pageNo++) {
      const candidates = await store.findDeferred(projectId, 200, [...blocked]);
      let progressed = false;
      for (const c of candidates) {
        if (blocked.has(c.projectId)) continue;
        try {
          const r = await admit(c.id, c.revision);
          if (r && isDeferred(r.status)) blocked.add(c.projectId);
          else if (r) admitted++;
          progressed ||= r !== null;
        } catch (err) {
          log.warn({ err, articleId: c.id }, "re-admission failed; will retry");
          blocked.add(c.projectId);
        }
      }
      if (candidates.length < 200 || !progressed) break;
    }
    if (admitted > 0) log.info({ admitted, projectId }, "deferred articles admitted");
    return admitted;
  }

  return {
    admit,
    readmitDeferred,
    content,
    async close() {
      if (ownPool) await content.close();
    },
    admitHeld: decide,
    leaseUntil: (now = new Date()) => now.getTime() + leaseMs,
  };
}
