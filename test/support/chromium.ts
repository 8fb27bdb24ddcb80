// Debian's Chromium for the browser tiers (driven by playwright-core).
import { existsSync } from "node:fs";

export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

/** In a `before` hook: the browser's path; without one the tier fails in CI and is skipped, loudly, elsewhere. */
export function requireChromium(ctx: Mocha.Context): string {
  if (existsSync(CHROMIUM)) return CHROMIUM;
  const msg = `browser tier did not run: no Chromium at ${CHROMIUM} (apt-get install chromium)`;
  if (process.env.CI === "true") throw new Error(msg);
  console.warn(`      ⚠ ${msg}`);
  ctx.skip();
}
