// The bounds of a loudness target, shared by everything that accepts one: the
// deployment's variables (services/audio/providers/config.ts), a project's
// settings (services/auth/settings.ts) and the render options
// (services/audio/loudness checkTarget). One place, so a target one of them
// accepts is never refused by another.

export const LOUDNESS_RANGE = Object.freeze({
  /** Integrated loudness, LUFS. */
  lufs: { min: -40, max: -10 },
  /** True-peak ceiling, dBTP. */
  truePeakDbtp: { min: -12, max: 0 },
} as const);

/**
 * A project's own loudness target (project settings `loudness`, snapshotted on each admitted
 * revision). A field left out takes the deployment's (AUDIO_LOUDNESS_LUFS, AUDIO_TRUE_PEAK_DBTP).
 */
export interface LoudnessSettings {
  lufs?: number;
  truePeakDbtp?: number;
}
