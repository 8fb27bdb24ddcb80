// The native engine (espeak-ng + lame on PATH) is what the container image
// runs, so CI must test it: under CI=true a missing program fails the tier
// (same convention as test/support/servers.ts); elsewhere the tests skip loudly.
import { findNativePrograms } from "../../services/audio/engine/native.js";

export async function requireNativeEngine(ctx: Mocha.Context): Promise<void> {
  if (await findNativePrograms()) return;
  const msg = "native engine tests did not run: espeak-ng and lame are not on PATH (apt-get install espeak-ng lame)";
  if (process.env.CI === "true") throw new Error(msg);
  console.warn(`      ⚠ ${msg}`);
  ctx.skip();
}
