// Suites that test something other than rate limits send bursts far beyond a
// project's default limits (50 concurrent creates, tight polling); they keep
// the limiter in the path with limits they cannot reach.
export const ROOMY_RATE_LIMITS = {
  RATE_LIMIT_READS_PER_SECOND: "10000",
  RATE_LIMIT_READS_BURST: "100000",
  RATE_LIMIT_WRITES_PER_SECOND: "10000",
  RATE_LIMIT_WRITES_BURST: "100000",
  PLAYER_LOOKUPS_PER_ADDRESS_PER_SECOND: "10000",
  PLAYER_LOOKUPS_PER_ADDRESS_BURST: "100000",
} as const;
