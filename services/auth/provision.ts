// Start-up provisioning of tokens: SEED_TOKENS when given, otherwise the demo
// project on a store that has no project yet.
import type { Logger } from "../../lib/log.js";
import { applySeedTokens, demoBanner, ensureDemoProject } from "./seed.js";
import type { AuthStore } from "./store/port.js";

export async function provisionTokens(store: AuthStore, seedTokens: string | undefined, out: NodeJS.WritableStream, publicUrl: string, log: Logger): Promise<void> {
  if (seedTokens !== undefined) {
    const r = await applySeedTokens(store, seedTokens);
    log.info({ projectsCreated: r.projectsCreated, tokensCreated: r.tokensCreated, unchanged: r.unchanged }, "SEED_TOKENS applied");
    for (const i of r.revoked) log.warn(`SEED_TOKENS[${i}] was revoked by an admin and stays revoked; seed a new token instead`);
    return;
  }
  const demo = await ensureDemoProject(store);
  // Plain tokens go to the terminal once, deliberately not through the logger.
  if (demo) out.write(demoBanner(demo, publicUrl));
}
