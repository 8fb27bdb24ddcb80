// What a day's figures of one article can possibly be, whatever players send:
// nobody completes, reaches a quartile or listens without playing, and one
// play cannot listen longer than the audio lasts at the fastest speed the
// player offers. The store applies this to every increment, so it holds for
// forged beacons as for concurrent aggregators.
import type { Figures } from "./store.js";

/** The fastest playback rate gateway/player/player.js offers (its SPEEDS). */
export const MAX_PLAYBACK_SPEED = 2;

export interface FigureBounds {
  /** The most listening time one play can add: the audio's duration × MAX_PLAYBACK_SPEED. */
  secondsPerPlay: number;
}

export const boundsForDuration = (durationSeconds: number): FigureBounds => ({
  secondsPerPlay: Math.max(0, Number.isFinite(durationSeconds) ? durationSeconds : 0) * MAX_PLAYBACK_SPEED,
});

/** Figures bounded by the plays (each at most as high as plays). */
const PER_PLAY: (keyof Figures)[] = ["progress25", "progress50", "progress75", "completions"];

/**
 * `current` plus `delta`, each figure capped by what the plays allow. A play
 * needs no impression of the same day (the page may have been opened before
 * midnight), so impressions and plays only add up. Figures are never lowered:
 * a day counted before these bounds existed keeps what it has.
 */
export function addWithinBounds(current: Figures, delta: Partial<Figures>, bounds: FigureBounds): Figures {
  const next = { ...current };
  const plus = (k: keyof Figures) => current[k] + Math.max(0, delta[k] ?? 0);
  next.impressions = plus("impressions");
  next.plays = plus("plays");
  const capped = (k: keyof Figures, cap: number) => Math.max(current[k], Math.min(plus(k), cap));
  for (const k of PER_PLAY) next[k] = capped(k, next.plays);
  next.secondsListened = capped("secondsListened", next.plays * bounds.secondsPerPlay);
  // A download needs no play (a podcast app plays offline, unseen); the gateway counts each
  // listener once a day per episode, so only adding up is left to do here.
  next.downloads = plus("downloads");
  return next;
}
