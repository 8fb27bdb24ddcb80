// Where an article's text work runs: text preparation (HTML, pronunciation
// marks, normalisation) and chunk planning cost time in proportion to what a
// publisher sent, so the audio service runs them in a thread pool
// (lib/threads/pool.ts) with a deadline, never on its event loop: one article
// cannot stall another project's requests, and one whose text work exceeds
// the deadline fails once, with the reason (pipeline.ts makes it final).
import { createThreadPool } from "../../../lib/threads/pool.js";
import { planChunks, type ParagraphInput, type PlanOptions, type TextChunk } from "./chunks.js";
import { prepareSentences, type PreparedParagraph, type TextInput } from "./index.js";
import type { TimedSegment } from "../../../lib/segments.js";
import { transcriptTexts, type TranscriptTexts } from "../../../lib/transcripts.js";

export interface TextWork {
  /** The paragraphs to speak, title first, as sentences spoken and shown (prepareSentences). */
  prepare(project: string, input: TextInput): Promise<PreparedParagraph[]>;
  /** Chunks for one provider (planChunks). */
  plan(project: string, paragraphs: readonly ParagraphInput[], lang: string, maxChars: number, opts: PlanOptions): Promise<TextChunk[]>;
  /** The timed text files of a rendered revision (lib/transcripts.ts): in proportion to the article's text, so here too. */
  transcripts(project: string, segments: readonly TimedSegment[]): Promise<TranscriptTexts>;
  close(): Promise<void>;
}

export const TEXT_LIMITS = {
  /** Wall-clock time of one preparation or one plan: a 1,000,000-character article takes well under a second. */
  timeoutMs: 5_000,
  maxHeapMb: 256,
  /** Started on first use; one is enough for 2 articles rendered at once, whose text work is a small part of their time. */
  threads: 1,
  maxQueued: 256,
  /** Its thread stops when no article needed it for this long (~23 MB an idle process need not keep). */
  idleMs: 30_000,
} as const;

/** Configuration of the processes that run the audio service (lib/config.ts schema). */
export const TEXT_VARS = {
  AUDIO_TEXT_TIMEOUT_MS: {
    type: "integer",
    minimum: 100,
    maximum: 600_000,
    default: TEXT_LIMITS.timeoutMs,
    description: "deadline of one article's text preparation (pronunciation rules, normalisation) or chunk plan, run off the event loop; an article past it ends errored",
  },
} as const;

export type TextLimits = { -readonly [K in keyof typeof TEXT_LIMITS]: number };

/** The text broke a limit or made preparation fail: no retry can fix it. */
export class TextRejectedError extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = "TextRejectedError";
  }
}

/** No verdict: the pool is saturated or closing; the job is tried again later. */
export class TextBusyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "TextBusyError";
  }
}

export type TextJob = { kind: "prepare"; input: TextInput } | { kind: "plan"; paragraphs: readonly ParagraphInput[]; lang: string; maxChars: number; opts: PlanOptions } | { kind: "transcripts"; segments: readonly TimedSegment[] };
export type TextResult = { paragraphs: PreparedParagraph[] } | { chunks: TextChunk[] } | { files: TranscriptTexts };

/** On the calling thread: for tools, benches and tests that do not care about the event loop. */
export const inlineTextWork: TextWork = {
  prepare: async (_project, input) => prepareSentences(input),
  plan: async (_project, paragraphs, lang, maxChars, opts) => planChunks(paragraphs, lang, maxChars, opts),
  transcripts: async (_project, segments) => transcriptTexts(segments),
  close: async () => undefined,
};

export function createTextPool(overrides: Partial<TextLimits> = {}): TextWork {
  const limits: TextLimits = { ...TEXT_LIMITS, ...overrides };
  const pool = createThreadPool<TextJob, TextResult>({
    ...limits,
    entry: new URL("./thread.ts", import.meta.url),
    work: "text preparation",
    jobs: "text jobs",
    rejected: (reason) => new TextRejectedError(reason),
    busy: (message) => new TextBusyError(message),
  });
  return {
    async prepare(project, input) {
      return ((await pool.run(project, { kind: "prepare", input })) as { paragraphs: PreparedParagraph[] }).paragraphs;
    },
    async plan(project, paragraphs, lang, maxChars, opts) {
      return ((await pool.run(project, { kind: "plan", paragraphs, lang, maxChars, opts })) as { chunks: TextChunk[] }).chunks;
    },
    async transcripts(project, segments) {
      return ((await pool.run(project, { kind: "transcripts", segments })) as { files: TranscriptTexts }).files;
    },
    close: () => pool.close(),
  };
}
