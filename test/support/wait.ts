// Polling helpers for asynchronous assertions.
export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Resolves once cond() is true; fails with `what` after timeoutMs. */
export async function waitFor(cond: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(10);
  }
}
