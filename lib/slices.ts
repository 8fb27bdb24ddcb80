// Long synchronous work on a service's event loop, cut into turns: joining
// and hashing the hundreds of megabytes of a many-hour article took over a
// second in one piece, and every other project's requests waited for it.
// The work is written once, as a generator that yields between steps; it runs
// to completion at once (tests, small inputs) or in slices of a few
// milliseconds with the event loop served in between. The output is the same.

/** Work that yields between steps and returns its result when done. */
export type Steps<T> = Generator<void, T, void>;

/** A few milliseconds of work at a time keep another request's wait well under the 100 ms a read may take. */
const SLICE_MS = 8;

/** Resolves at once while the slice lasts; past it, after the event loop has had a turn. */
export function timeSlicer(sliceMs = SLICE_MS): () => Promise<void> | undefined {
  let since = performance.now();
  return () => {
    if (performance.now() - since < sliceMs) return undefined;
    return new Promise<void>((resolve) =>
      setImmediate(() => {
        since = performance.now();
        resolve();
      }),
    );
  };
}

/** Runs `steps` to the end without yielding. */
export function finish<T>(steps: Steps<T>): T {
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
  }
}

/** Runs `steps` in slices of `sliceMs`, letting the event loop turn between them. */
export async function finishInSlices<T>(steps: Steps<T>, sliceMs = SLICE_MS): Promise<T> {
  const turn = timeSlicer(sliceMs);
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
    const wait = turn();
    if (wait) await wait;
  }
}
