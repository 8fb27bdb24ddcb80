// The reservation algorithm of the auth store. Each step is one
// conditional single-document update, so two replicas (or fifty concurrent
// calls) can never both take the last unit: the filter re-checks the bound
// inside the write. A lost race only means reading again.
import type { ProjectState, ReserveOutcome } from "./port.js";

export interface ReserveOps {
  read(id: string): Promise<ProjectState | null>;
  /** Starts a new day's counter unless the stored day is already `day` or later. */
  resetDay(id: string, day: string): Promise<void>;
  /**
   * Counts `count` articles and debits `chars` (their sum) when usageDay =
   * day, the stored limit and bounded/unbounded balance are still as `seen`,
   * usedToday + count <= limit and balance >= chars.
   */
  take(id: string, day: string, chars: number, seen: ProjectState, count?: number): Promise<ProjectState | null>;
}

const MAX_ROUNDS = 20;

/** What a take's conditions depend on, as last seen: enough to try the take without reading first. */
export type ReserveHint = Pick<ProjectState, "dailyLimit" | "creditChars" | "usageDay">;

/**
 * `hint`: the project as this process last saw it. The take is tried with it
 * straight away (one write instead of a read and a write); its filter still
 * checks everything, so a stale hint only falls back to reading.
 */
export async function reserveWith(ops: ReserveOps, id: string, requestedDay: string, chars: number, hint?: ReserveHint, unit: 0 | 1 = 1): Promise<ReserveOutcome> {
  if (hint && hint.usageDay === requestedDay) {
    const after = await ops.take(id, requestedDay, chars, { settings: undefined, usedToday: 0, ...hint }, unit);
    if (after) return { ok: true, creditChars: after.creditChars, usedToday: after.usedToday };
  }
  let s: ProjectState | null = null;
  let day = requestedDay;
  for (let round = 0; round < MAX_ROUNDS; round++) {
    s = await ops.read(id);
    if (!s) return { ok: false, reason: "not_found", creditChars: null, usedToday: 0 };
    // A replica whose clock is behind counts on the newer day rather than resetting it.
    if (s.usageDay > day) day = s.usageDay;
    if (s.usageDay !== day) {
      await ops.resetDay(id, day);
      continue;
    }
    if (unit > 0 && s.dailyLimit !== null && s.usedToday >= s.dailyLimit) return { ok: false, reason: "limit_reached", creditChars: s.creditChars, usedToday: s.usedToday };
    if (s.creditChars !== null && s.creditChars < chars) return { ok: false, reason: "no_money", creditChars: s.creditChars, usedToday: s.usedToday };
    const after = await ops.take(id, day, chars, s, unit);
    if (after) return { ok: true, creditChars: after.creditChars, usedToday: after.usedToday };
  }
  // Only reachable when the settings keep changing under us; refusing is the safe side.
  return { ok: false, reason: "limit_reached", creditChars: s?.creditChars ?? null, usedToday: s?.usedToday ?? 0 };
}

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

/** Each item's outcome when a whole batch was taken in one write: the figures as if taken one by one, in order. */
function spread(after: ProjectState, chars: number[], unit: number): ReserveOutcome[] {
  let later = sum(chars);
  return chars.map((c, i) => {
    later -= c;
    return { ok: true, creditChars: after.creditChars === null ? null : after.creditChars + later, usedToday: after.usedToday - (chars.length - 1 - i) * unit };
  });
}

/**
 * Several reservations of one project, in order, each as reserveWith would
 * decide it. When the whole batch fits it is taken in one conditional write
 * (tried with the hint first, like a single one); at a bound the items go one
 * by one, so the first ones still get what is left. `unit` 0: the articles
 * are not counted against the daily limit (their characters still are debited).
 */
export async function reserveManyWith(ops: ReserveOps, id: string, day: string, chars: number[], hint?: ReserveHint, unit: 0 | 1 = 1): Promise<ReserveOutcome[]> {
  if (chars.length === 1) return [await reserveWith(ops, id, day, chars[0], hint, unit)];
  const total = sum(chars);
  const count = chars.length * unit;
  const fits = (s: ReserveHint & { usedToday: number }) =>
    (s.dailyLimit === null || s.usedToday + count <= s.dailyLimit) && (s.creditChars === null || s.creditChars >= total);
  if (hint && hint.usageDay === day) {
    const after = await ops.take(id, day, total, { settings: undefined, usedToday: 0, ...hint }, count);
    if (after) return spread(after, chars, unit);
  }
  const s = await ops.read(id);
  if (!s) return chars.map(() => ({ ok: false, reason: "not_found", creditChars: null, usedToday: 0 }));
  if (s.usageDay === day && fits(s)) {
    const after = await ops.take(id, day, total, s, count);
    if (after) return spread(after, chars, unit);
  }
  const out: ReserveOutcome[] = [];
  for (const c of chars) out.push(await reserveWith(ops, id, day, c, undefined, unit));
  return out;
}

export const utcDay = (d = new Date()) => d.toISOString().slice(0, 10);
