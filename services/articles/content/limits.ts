// The hard limits on content work (HTML extraction and classification), and
// the errors that say which one an input broke. A broken limit is a verdict
// on the content (the article is rejected with rule `content`); a busy or
// closed pool is not (the article waits for the next admission attempt).

export const CONTENT_LIMITS = {
  /** Element nesting the parser is allowed to build; real pages stay far below (~30–60). */
  maxDepth: 256,
  /** Wall-clock time of one extraction + classification, measured in its worker thread. */
  timeoutMs: 5_000,
  /** Heap of one worker thread. */
  maxHeapMb: 512,
  /** Characters of extracted text (the longest text an article may have). */
  maxOutputChars: 1_000_000,
  /** Worker threads doing content work. */
  threads: 2,
  /** Plain text up to this many characters (title included) is classified on the calling thread: cheaper than a round trip to a worker (~90 µs here against ~250 µs). */
  inlineChars: 2_000,
  /** Jobs waiting for a thread, over all projects; more are refused until the queue drains. */
  maxQueued: 256,
  /** A thread idle this long stops: each holds ~35 MB, and a thread starts again in well under a second. */
  idleMs: 30_000,
} as const;

export type ContentLimits = { readonly [K in keyof typeof CONTENT_LIMITS]: number };

/** The input broke a limit or made the extractor fail: rejecting it is final. */
export class ContentRejectedError extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = "ContentRejectedError";
  }
}

/** No verdict: the content pool is saturated or shutting down; try again later. */
export class ContentBusyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ContentBusyError";
  }
}

export const depthReason = (max: number) => `HTML nested deeper than ${max} levels`;
export const outputReason = (max: number) => `extracted text is longer than ${max} characters`;
