// Per-project settings as they travel between the auth service (which owns
// and validates them, services/auth/settings.ts) and the articles service
// (which applies them in admission). One definition for both sides.
import type { LoudnessSettings } from "./loudness.js";

export type { LoudnessSettings };

export interface TypeThreshold {
  /** Reject when the type scores below this (an undetected type scores 0). */
  min?: number;
  /** Reject when the type scores above this. */
  max?: number;
}

export interface ProjectRules {
  minChars?: number;
  maxChars?: number;
  /** `*` wildcard patterns over the whole URL; when set, an article needs a URL matching one. */
  urlAllow?: string[];
  urlDeny?: string[];
  /** When set, an article needs at least one of these labels. */
  labelsInclude?: string[];
  labelsExclude?: string[];
  /** e.g. ["de-DE"]. */
  languages?: string[];
  types?: Record<string, TypeThreshold>;
}

/** A token bucket: `perSecond` refill, `burst` capacity (gateway/ratelimit.ts, docs/limits.md). */
export interface BucketSettings {
  perSecond?: number;
  burst?: number;
}

/** Per-project REST API limits; absent fields take the deployment's defaults. */
export interface RateLimitSettings {
  reads?: BucketSettings;
  writes?: BucketSettings;
  /** Lines of bulk imports (docs/import.md). */
  imports?: BucketSettings;
}

export interface ProjectSettings {
  /** Articles audified per UTC day; null = unlimited. */
  dailyLimit: number | null;
  /** Balance in characters; null = unlimited. Kept apart from the rest in the store (it moves with every article). */
  creditChars: number | null;
  defaultVoice: string | null;
  defaultLang: string | null;
  rules: ProjectRules;
  webhook: { url: string; secret: string } | null;
  recrawl: { enabled: boolean; everyMinutes: number; maxAgeHours: number };
  /** REST API rate limits of this project; absent = the gateway's defaults. */
  rateLimit?: RateLimitSettings;
  /** Loudness target of this project's files; absent = the deployment's (lib/loudness.ts). */
  loudness?: LoudnessSettings;
  /** When audio is made: at once ("immediate", the default) or when a listener or the publisher asks for it ("onDemand"). */
  audio?: AudioTiming;
  /** Renders public player lookups may start (audio on demand); absent fields take the deployment's defaults (docs/player.md). */
  onDemandBudget?: OnDemandBudgetSettings;
}

/** A token bucket of renders: `burst` at once, refilled at `perHour`. */
export interface OnDemandBudgetSettings {
  perHour?: number;
  burst?: number;
}

export const AUDIO_TIMINGS = ["immediate", "onDemand"] as const;
export type AudioTiming = (typeof AUDIO_TIMINGS)[number];

export const DEFAULT_SETTINGS: ProjectSettings = Object.freeze({
  dailyLimit: null,
  creditChars: null,
  defaultVoice: null,
  defaultLang: null,
  rules: {},
  webhook: null,
  recrawl: { enabled: false, everyMinutes: 60, maxAgeHours: 24 },
  audio: "immediate",
}) as ProjectSettings;
