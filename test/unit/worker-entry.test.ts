// Worker threads started from TypeScript sources get their entry bundled by
// esbuild (lib/threads/worker-entry.ts). Two pools starting at once (the
// articles service's content threads and the audio service's text thread in
// one embedded process) once left the second bundle waiting forever, and with
// it every job of that pool.
import { expect } from "chai";
import { workerEntry } from "../../lib/threads/worker-entry.js";

describe("worker entries from TypeScript sources", function () {
  this.timeout(60_000);

  it("bundles two entries requested at the same time", async () => {
    const entries = [new URL("../../services/audio/text/thread.ts", import.meta.url), new URL("../../services/articles/content/worker.ts", import.meta.url)];
    const urls = await Promise.race([
      Promise.all(entries.map((e) => workerEntry(e))),
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error("a bundle never finished")), 30_000)),
    ]);
    for (const u of urls) expect(u.protocol).to.equal("data:");
  });
});
