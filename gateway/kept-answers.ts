// Read answers kept for reuse while nothing they were produced from has changed.
// Only where this process makes every write its answers depend on (the embedded
// default, stores on SQLite): `changes` grows whenever reads may see a new
// write (DocumentCollection.changes), and an answer is reused only while it
// has not grown since before the answer's data was read. A write that lands
// while an answer is being produced leaves that answer unkept, so a kept
// answer is never older than the last write a reader could see.
//
// Answers are kept by the same key as identical reads in flight share one
// (coalesce.ts): the credential, the links' base, the method, path and query.
// A key names a credential the services accepted when the answer was made.
// Any write to tokens or projects lets go of every answer, but the services
// themselves trust a credential they checked for a few seconds (lib/rpc/
// caller.ts), and answers made in those seconds still name it: so no answer is
// reused longer than a second after it was made, and a revoked token is
// refused at most that second later than without kept answers.

import { Counter } from "prom-client";
import { registry } from "../lib/metrics.js";

/** Counted in plain numbers on the hot path; the metric reads them when scraped. */
const totals = { hit: 0, kept: 0, not_kept: 0 };
new Counter({
  name: "gateway_kept_answers_total",
  help: "Read answers of the embedded default's gateway: answered from a kept answer (hit), made and kept, made and not kept (a write landed meanwhile, or too large)",
  labelNames: ["result"] as const,
  registers: [registry],
  collect() {
    this.reset();
    for (const [result, n] of Object.entries(totals)) this.inc({ result }, n);
  },
});

export interface KeptAnswers {
  /** The answer kept under `key`, when nothing changed since it was produced. */
  get(key: string): string | undefined;
  /** Produces an answer and keeps it, unless something changed meanwhile. */
  keep(key: string, produce: () => Promise<string>): Promise<string>;
  /** Characters held. */
  readonly chars: number;
}

/** Enough for thousands of single-article answers; a list page of long texts is not kept. */
export const DEFAULT_KEPT_CHARS = 8 * 1024 * 1024;
export const DEFAULT_KEPT_MS = 1_000;

export interface KeptAnswersOptions {
  maxChars?: number;
  /** How long an answer is reused at most, changes or not. */
  maxAgeMs?: number;
  now?: () => number;
}

export function createKeptAnswers(changes: () => number, opts: KeptAnswersOptions = {}): KeptAnswers {
  const { maxChars = DEFAULT_KEPT_CHARS, maxAgeMs = DEFAULT_KEPT_MS, now = Date.now } = opts;
  const entries = new Map<string, { answer: string; until: number }>();
  let chars = 0;
  let seen = changes();

  /** Lets go of everything once anything changed: answers are not tracked by what they read. */
  const current = () => {
    const value = changes();
    if (value !== seen) {
      entries.clear();
      chars = 0;
      seen = value;
    }
  };
  const drop = (key: string, entry: { answer: string }) => {
    entries.delete(key);
    chars -= entry.answer.length;
  };

  return {
    get(key) {
      current();
      const hit = entries.get(key);
      if (!hit) return undefined;
      if (hit.until > now()) {
        totals.hit++;
        return hit.answer;
      }
      drop(key, hit);
      return undefined;
    },
    async keep(key, produce) {
      const before = changes();
      const answer = await produce();
      current();
      if (seen !== before || answer.length > maxChars / 64) {
        totals.not_kept++;
        return answer;
      }
      totals.kept++;
      const old = entries.get(key);
      if (old) drop(key, old);
      // Oldest first out: a map iterates in insertion order.
      for (const [k, v] of entries) {
        if (chars + answer.length <= maxChars) break;
        drop(k, v);
      }
      entries.set(key, { answer, until: now() + maxAgeMs });
      chars += answer.length;
      return answer;
    },
    get chars() {
      return chars;
    },
  };
}
