// Where, inside one chunk's audio, each of the pieces it speaks starts and
// ends. The chunk's own start and end are exact (frame durations); between
// them the pieces are separated by pauses, chosen so that every piece gets a
// share of the time that fits its length in characters and the chosen pauses
// are the deepest ones: a pause after a comma is shorter and shallower than
// one between sentences, and the speaking rate keeps a long sentence from
// being split at its commas.
import type { Pause } from "./pauses.js";

export interface PieceTime {
  start: number;
  end: number;
}

/** Weight of the speaking rate against the depth of the pauses chosen. */
const RATE_WEIGHT = 1.5;

/**
 * Times of `chars.length` pieces spoken one after another in `duration` seconds, separated at
 * `pauses` (in order, relative to the chunk's start). With fewer pauses than boundaries, the
 * missing ones are placed by characters.
 */
export function alignPieces(chars: readonly number[], duration: number, pauses: readonly Pause[]): PieceTime[] {
  const n = chars.length;
  if (n === 0) return [];
  if (n === 1) return [{ start: 0, end: duration }];
  const total = chars.reduce((a, b) => a + b, 0) || n;
  const candidates = withFallbacks(chars, total, duration, pauses);
  const m = candidates.length;
  const k = n - 1;
  const rate = total / duration;
  const maxDepth = Math.max(1, ...candidates.map((p) => p.depth));
  // cost[j][p]: best cost with boundary j (0-based) at candidate p; from[j][p]: the candidate of boundary j-1.
  const cost = Array.from({ length: k }, () => new Float64Array(m).fill(Infinity));
  const from = Array.from({ length: k }, () => new Int32Array(m).fill(-1));
  const pieceCost = (c: number, seconds: number) => {
    if (seconds <= 0) return 1e6;
    const r = Math.log(c / seconds / rate);
    return RATE_WEIGHT * r * r;
  };
  const pauseCost = (p: Pause) => -p.depth / maxDepth;
  for (let p = 0; p <= m - k; p++) cost[0][p] = pieceCost(chars[0], candidates[p].start) + pauseCost(candidates[p]);
  for (let j = 1; j < k; j++) {
    for (let p = j; p <= m - k + j; p++) {
      const here = pauseCost(candidates[p]);
      for (let q = j - 1; q < p; q++) {
        const before = cost[j - 1][q];
        if (before === Infinity) continue;
        const c = before + here + pieceCost(chars[j], candidates[p].start - candidates[q].end);
        if (c < cost[j][p]) {
          cost[j][p] = c;
          from[j][p] = q;
        }
      }
    }
  }
  let best = -1;
  let bestCost = Infinity;
  for (let p = k - 1; p < m; p++) {
    const c = cost[k - 1][p] + pieceCost(chars[n - 1], duration - candidates[p].end);
    if (c < bestCost) {
      bestCost = c;
      best = p;
    }
  }
  const chosen = new Array<number>(k);
  for (let j = k - 1, p = best; j >= 0; j--) {
    chosen[j] = p;
    p = from[j][p];
  }
  return chars.map((_, i) => ({
    start: i === 0 ? 0 : startAfter(candidates[chosen[i - 1]]),
    end: i === n - 1 ? duration : candidates[chosen[i]].start,
  }));
}

/**
 * A sentence's own pause after it lasts about this long; what a longer pause holds beyond it (a
 * paragraph break, a breath before a quotation) already belongs to the next sentence, whose
 * highlight then comes just before its voice.
 */
const TRAILING_PAUSE_S = 0.3;

const startAfter = (p: Pause) => p.start + Math.min(p.end - p.start, TRAILING_PAUSE_S);

/** The pauses found, and when they are too few, points placed by characters (depth 0) where none is near. */
function withFallbacks(chars: readonly number[], total: number, duration: number, pauses: readonly Pause[]): Pause[] {
  if (pauses.length >= chars.length - 1) return [...pauses];
  const out = [...pauses];
  let seen = 0;
  for (let i = 0; i < chars.length - 1; i++) {
    seen += chars[i];
    const t = (seen / total) * duration;
    out.push({ start: t, end: t, depth: 0 });
  }
  return out.sort((a, b) => a.start - b.start);
}
