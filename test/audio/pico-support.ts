import { loadLingware } from "../../services/audio/engine/pico/index.js";

/** The directory with Pico's pinned files; skips the test where this machine has none, unless CI is set (CI must have them). */
export function picoFilesOrSkip(ctx: Mocha.Context): string {
  try {
    return loadLingware("de-DE").dir;
  } catch (err) {
    if (process.env.CI) throw err;
    ctx.skip();
  }
}
