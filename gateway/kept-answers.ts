// Read answers kept for reuse while nothing they were produced from has changed.
// Only where this process makes every write its answers depend on (the embedded
// default, stores on SQLite): `changes` grows whenever reads may see a new
// write (DocumentCollection.changes), and an answer is reused only while it
// has not grown since before the answer's data was read. A write that lands
// while an answer is being produced leaves that answer unkept, so a kept
// answer is never older than the last write a reader could see.
//
// An answer made from one stored row (GET by id: the article, and the token)
// is kept through the insert of another row: `rewrites` grows with every
// write but a plain insert, and such an answer lives while it has not grown.
// Every other answer (a list page, a lookup by a field that is not unique)
// lives while `changes` has not grown: each remembers the value it was made
// at, and one found older is let go when read.
//
// Answers are kept by the same key as identical reads in flight share one
// (coalesce.ts): the credential, the links' base, the method and what the
// read is made from (the path, or a list's validated query: never the raw
// query string, which a route may ignore and a client may make as long as it
// likes). Keys count toward the bound as much as answers do: what is held,
// keys, answers and a fixed overhead per entry, stays under `maxChars`.
// A key names a credential the services accepted when the answer was made.
// Any write to tokens or projects lets go of every answer, but the services
// themselves trust a credential they checked for a few seconds (lib/rpc/
// caller.ts), and answers made in those seconds still name it: so no answer is
// reused longer than a second after it was made, and a revoked token is
// refused at most that second later than without kept answers.

import { Counter } from "prom-client";
import { registry } from "../lib/metrics.js";
import { SizedFifo } from "../lib/sized-fifo.js";

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
  /** The answer kept under `key`, when nothing it was made from changed since it was produced. */
  get(key: string): string | undefined;
  /** Produces an answer and keeps it, unless something changed meanwhile. `oneRow`: made from one stored row (see above). */
  keep(key: string, produce: () => Promise<string>, oneRow?: boolean): Promise<string>;
  /** Characters held, keys included, plus ENTRY_OVERHEAD_CHARS per entry. */
  readonly chars: number;
  /** Entries held. */
  readonly size: number;
}

/** Enough for thousands of single-article answers; a list page of long texts is not kept. */
export const DEFAULT_KEPT_CHARS = 8 * 1024 * 1024;
export const DEFAULT_KEPT_MS = 1_000;
/**
 * What an entry holds besides its key's and answer's characters (the map's
 * slot, the entry object, two string headers), counted as characters so that
 * many tiny answers cannot hold more memory than the bound says.
 */
export const ENTRY_OVERHEAD_CHARS = 128;

export interface KeptAnswersOptions {
  /** Bound on what is held: keys, answers and each entry's overhead, in characters. */
  maxChars?: number;
  /** Bound on one entry (key, answer and overhead); default a 64th of `maxChars`. */
  maxEntryChars?: number;
  /** How long an answer is reused at most, changes or not. */
  maxAgeMs?: number;
  now?: () => number;
  /** Grows with every write but a plain insert of a new row (DocumentCollection.rewrites); absent: `changes` stands for it. */
  rewrites?: () => number;
}

export function createKeptAnswers(changes: () => number, opts: KeptAnswersOptions = {}): KeptAnswers {
  const { maxChars = DEFAULT_KEPT_CHARS, maxAgeMs = DEFAULT_KEPT_MS, now = Date.now } = opts;
  const maxEntryChars = opts.maxEntryChars ?? maxChars / 64;
  // Oldest first out, without a walk (lib/sized-fifo.ts).
  const rewrites = opts.rewrites ?? changes;
  // `made`: the value of `changes` the answer was made at; undefined for a one-row answer.
  const entries = new SizedFifo<{ answer: string; until: number; made: number | undefined }>(maxChars);
  let seen = changes();
  let seenRewrites = rewrites();

  /** Lets go of everything once a row already stored may have changed; reads what `changes` is now. */
  const current = () => {
    const value = rewrites();
    if (value !== seenRewrites) {
      entries.clear();
      seenRewrites = value;
    }
    seen = changes();
  };

  return {
    get(key) {
      current();
      const hit = entries.get(key);
      if (!hit) return undefined;
      if (hit.until > now() && (hit.made === undefined || hit.made === seen)) {
        totals.hit++;
        return hit.answer;
      }
      entries.delete(key);
      return undefined;
    },
    async keep(key, produce, oneRow = false) {
      const before = oneRow ? rewrites() : changes();
      const answer = await produce();
      current();
      const size = key.length + answer.length + ENTRY_OVERHEAD_CHARS;
      if ((oneRow ? seenRewrites : seen) !== before || size > maxEntryChars) {
        totals.not_kept++;
        return answer;
      }
      totals.kept++;
      entries.set(key, { answer, until: now() + maxAgeMs, made: oneRow ? undefined : seen }, size);
      return answer;
    },
    get chars() {
      return entries.total;
    },
    get size() {
      return entries.size;
    },
  };
}
