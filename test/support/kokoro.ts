// Whether Kokoro's files are installed, for the tests that need the engine itself.
import { defaultKokoroDir } from "../../services/audio/engine/kokoro/index.js";
import { kokoroFiles } from "../../services/audio/engine/kokoro/files.js";

export function kokoroInstalled(): boolean {
  try {
    kokoroFiles(process.env.KOKORO_DIR ?? defaultKokoroDir());
    return true;
  } catch {
    return false;
  }
}

/** Skips the suite with a warning when the files are missing; on CI (which installs them) that fails. */
export function requireKokoro(ctx: Mocha.Context): void {
  if (kokoroInstalled()) return;
  const msg = `Kokoro tests did not run: its files are not in ${process.env.KOKORO_DIR ?? defaultKokoroDir()} (node scripts/install-voices.mjs)`;
  if (process.env.CI === "true") throw new Error(msg);
  console.warn(`      ⚠ ${msg}`);
  ctx.skip();
}
