// How long an audio worker lets renders in flight run on after SIGTERM (AUDIO_DRAIN_MS), the same
// for the audio service's own process and for the embedded default that runs it in-process.
import { ConfigError } from "../../lib/config.js";

export const AUDIO_DRAIN_VARS = {
  AUDIO_DRAIN_MS: { type: "integer", minimum: 0, description: "after SIGTERM, how long renders in flight may run on before they are handed back (default: SHUTDOWN_GRACE_MS minus 5 s); at least 1 s below SHUTDOWN_GRACE_MS" },
} as const;

/**
 * The drain in milliseconds. What is left of the grace period after it closes the engine, the bus
 * and the stores: at least a second, or start-up stops naming the variable.
 */
export function audioDrainMsOf(cfg: { AUDIO_DRAIN_MS?: number; SHUTDOWN_GRACE_MS: number }): number {
  if (cfg.AUDIO_DRAIN_MS === undefined) return Math.max(1_000, cfg.SHUTDOWN_GRACE_MS - 5_000);
  if (cfg.AUDIO_DRAIN_MS > cfg.SHUTDOWN_GRACE_MS - 1_000) {
    throw new ConfigError(`Invalid configuration: AUDIO_DRAIN_MS (${cfg.AUDIO_DRAIN_MS}) must be at least 1000 below SHUTDOWN_GRACE_MS (${cfg.SHUTDOWN_GRACE_MS})`);
  }
  return cfg.AUDIO_DRAIN_MS;
}
