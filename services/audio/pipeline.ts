// Article → MP3: prepare the text, synthesize chunks concurrently, join them
// at frame level with pauses, and cut the preview from the same audio at a
// chunk (sentence) boundary.
import { createHash } from "node:crypto";
import type { PronunciationRule } from "../../lib/pronunciations.js";
import { LANGS, type Lang } from "../../lib/voices.js";
import type { SpeechEngine } from "./engine/index.js";
import { joinMp3, mp3Duration, silenceFrames } from "./mp3/index.js";
import { ProviderError } from "./providers/errors.js";
import { engineText, takesPhonemes } from "./providers/local.js";
import { reencode, sameStreamFormat, streamFormat } from "./providers/reformat.js";
import type { SpeechRouter } from "./providers/router.js";
import { packChunks, prepareText, type TextChunk } from "./text/index.js";

export interface ArticleContent {
  title: string;
  text: string;
  lang: string;
  voice: string;
  parse?: boolean;
  isRaw?: boolean;
  /** The project's rules snapshotted on the revision; chunk texts carry marks for them. */
  pronunciations?: readonly PronunciationRule[];
}

export interface RenderOptions {
  /** Chunks synthesized at once. */
  concurrency?: number;
  previewSeconds?: number;
  signal?: AbortSignal;
  /** Upper bound of one synthesis request; small chunks give finer preview cuts. */
  maxChunkChars?: number;
  titlePauseMs?: number;
  paragraphPauseMs?: number;
  /** Called after each synthesized chunk, e.g. to keep a job lease alive. */
  onProgress?(done: number, total: number): void;
}

export interface RenderResult {
  full: Buffer;
  /** Seconds, from the MP3 frames. */
  fullDuration: number;
  preview: Buffer;
  previewDuration: number;
  chunks: number;
  /** Where spoken chunks meet in `full`: end of a chunk (seconds) and the pause inserted after it. */
  joins: Join[];
}

export interface Join {
  seconds: number;
  pauseSeconds: number;
}

/** Input that no retry can fix (no text, unknown language). */
export class RenderInputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "RenderInputError";
  }
}

async function mapBounded<T, R>(items: T[], limit: number, signal: AbortSignal, fn: (item: T, i: number) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      signal.throwIfAborted();
      const i = next++;
      results[i] = await fn(items[i], i);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  return results;
}

/**
 * Index of the last chunk the preview keeps: the longest opening within
 * previewSeconds, but never less than the title and the first body chunk.
 */
function previewEnd(chunks: TextChunk[], endTimes: number[], previewSeconds: number): number {
  const firstBody = chunks.findIndex((c) => c.paragraph > 0);
  const minimum = firstBody === -1 ? chunks.length - 1 : firstBody;
  let end = minimum;
  for (let i = minimum + 1; i < chunks.length && endTimes[i] <= previewSeconds; i++) end = i;
  return end;
}

export async function renderArticle(article: ArticleContent, engine: SpeechEngine, opts: RenderOptions = {}): Promise<RenderResult> {
  const { lang, paragraphs } = prepareArticle(article);
  const chunks = packChunks(paragraphs, opts.maxChunkChars ?? 300, lang);
  if (chunks.length === 0) throw new RenderInputError("The article has no readable text");

  // One failed chunk makes the whole render fail: stop the others early.
  const inner = new AbortController();
  const onAbort = () => inner.abort(opts.signal?.reason);
  opts.signal?.addEventListener("abort", onAbort, { once: true });
  if (opts.signal?.aborted) onAbort();
  let done = 0;
  try {
    const [titlePause, paragraphPause] = await Promise.all([engine.silence(opts.titlePauseMs ?? 700), engine.silence(opts.paragraphPauseMs ?? 400)]);
    const audio = await mapBounded(chunks, opts.concurrency ?? 2, inner.signal, async (chunk) => {
      try {
        const text = engineText(chunk.text, article.pronunciations, lang, takesPhonemes(engine));
        const mp3 = await engine.synthesize({ text, voice: article.voice, lang }, inner.signal);
        opts.onProgress?.(++done, chunks.length);
        return mp3;
      } catch (e) {
        inner.abort(e);
        throw e;
      }
    });
    return assemble(chunks, audio, titlePause, paragraphPause, opts.previewSeconds ?? 30);
  } finally {
    opts.signal?.removeEventListener("abort", onAbort);
  }
}

function prepareArticle(article: ArticleContent): { lang: Lang; paragraphs: string[] } {
  if (!(LANGS as readonly string[]).includes(article.lang)) throw new RenderInputError(`Unsupported language '${article.lang}'; one of: ${LANGS.join(", ")}`);
  const lang = article.lang as Lang;
  return { lang, paragraphs: prepareText({ title: article.title, text: article.text, lang, parse: article.parse, isRaw: article.isRaw, pronunciations: article.pronunciations }) };
}

function assemble(chunks: TextChunk[], audio: Buffer[], titlePause: Buffer, paragraphPause: Buffer, previewSeconds: number): RenderResult {
  const parts: Buffer[] = [];
  const endTimes: number[] = [];
  const partsThrough: number[] = [];
  const joins: Join[] = [];
  let t = 0;
  chunks.forEach((chunk, i) => {
    parts.push(audio[i]);
    t += mp3Duration(audio[i]);
    endTimes.push(t);
    partsThrough.push(parts.length);
    if (i === chunks.length - 1) return;
    const join: Join = { seconds: t, pauseSeconds: 0 };
    if (chunk.paragraphEnd) {
      const pause = chunk.paragraph === 0 ? titlePause : paragraphPause;
      parts.push(pause);
      join.pauseSeconds = mp3Duration(pause);
      t += join.pauseSeconds;
    }
    joins.push(join);
  });

  const full = joinMp3(parts);
  const last = previewEnd(chunks, endTimes, previewSeconds);
  const whole = last === chunks.length - 1;
  const preview = whole ? full : joinMp3(parts.slice(0, partsThrough[last]));
  // Frame durations summed part by part: the joined file holds exactly these frames, and a
  // second scan of an hour of audio would only cost memory.
  return { full, fullDuration: t, preview, previewDuration: whole ? t : endTimes[last], chunks: chunks.length, joins };
}

// ---- Through the provider router: cache, retries, fallback chain ----

export interface ProviderArticle extends ArticleContent {
  prompt?: string;
}

export interface ProviderRenderOptions extends Omit<RenderOptions, "concurrency" | "onProgress"> {
  /** A retryable failure; `fallback` tells whether a fallback provider is the one failing. */
  onRetry?(error: string, fallback: boolean): Promise<void> | void;
  /** The previous provider gave up with `error`; `provider` takes over. */
  onFallback?(error: string, provider: string): Promise<void> | void;
  /** Text of the opening chunks (title and first body chunks), kept small so the preview can end early. */
  openingChunkChars?: number;
}

export interface ProviderRenderResult extends RenderResult {
  /** Provider that made the audio ("openai", "azure", or the local engine's name). */
  provider: string;
  /** Chunks whose stream differed from the first chunk's and were re-encoded. */
  reencoded: number;
}

// About 30 s of speech at ~15 characters per second: chunks up to here stay small for the preview.
const OPENING_CHARS = 450;

export interface PlanOptions {
  /** Text of the opening chunks (title and first paragraphs), small so the preview can end early. */
  openingChars?: number;
  /**
   * Put several whole paragraphs into one request after the opening (cloud providers, which
   * read a blank line as a paragraph break). Without it every paragraph is at least one request,
   * and an article of short paragraphs needs hundreds of them.
   */
  packParagraphs?: boolean;
}

/**
 * Chunks for a provider: the opening (about the preview's length) in small chunks so the
 * preview can end at a sentence near 30 s, the rest up to the provider's limit. A chunk holds
 * whole paragraphs or part of one, never parts of two, so an edit re-synthesizes only the chunks
 * of the paragraphs it touches.
 */
export function planChunks(paragraphs: string[], lang: Lang, maxChars: number, opts: PlanOptions | number = {}): TextChunk[] {
  const { openingChars = 300, packParagraphs = false } = typeof opts === "number" ? { openingChars: opts } : opts;
  let cut = 0;
  let chars = 0;
  while (cut < paragraphs.length && (cut < 2 || chars < OPENING_CHARS)) chars += paragraphs[cut++].length;
  const small = Math.min(openingChars, maxChars);
  const opening = packChunks(paragraphs.slice(0, cut), small, lang);
  const rest = packParagraphs
    ? packWholeParagraphs(paragraphs, cut, maxChars, lang)
    : packChunks(paragraphs.slice(cut), maxChars, lang).map((c) => ({ ...c, paragraph: c.paragraph + cut }));
  return [...opening, ...rest];
}

/** What separates packed paragraphs inside one request. */
export const PARAGRAPH_BREAK = "\n\n";

/**
 * Groups paragraphs from `from` on into requests of at most maxChars. Where a group starts is
 * decided by the content of the paragraph that starts it (its opening words), not by position
 * or running length, so editing a paragraph changes only its own group's text, and inserting or
 * deleting one disturbs only the groups next to it. Groups average about half the limit, which
 * leaves room for paragraphs to grow before the limit forces an extra cut.
 */
function packWholeParagraphs(paragraphs: string[], from: number, maxChars: number, lang: Lang): TextChunk[] {
  const body = paragraphs.slice(from);
  const lengths = body.map((p) => p.length).sort((a, b) => a - b);
  const typical = Math.max(1, lengths[Math.floor(lengths.length / 2)] ?? 1);
  // About one group start per `every` paragraphs; a median barely moves when one paragraph changes.
  const every = Math.max(1, Math.round(maxChars / 2 / (typical + PARAGRAPH_BREAK.length)));
  const out: TextChunk[] = [];
  let group: string[] = [];
  let groupChars = 0;
  const flush = (last: number) => {
    if (group.length) out.push({ text: group.join(PARAGRAPH_BREAK), paragraph: last, paragraphEnd: true });
    group = [];
    groupChars = 0;
  };
  body.forEach((para, k) => {
    const index = from + k;
    if (para.length > maxChars) {
      flush(index - 1);
      out.push(...packChunks([para], maxChars, lang).map((c) => ({ ...c, paragraph: index })));
      return;
    }
    const fits = groupChars + (group.length ? PARAGRAPH_BREAK.length : 0) + para.length <= maxChars;
    if (group.length && (!fits || startsGroup(para, every))) flush(index - 1);
    group.push(para);
    groupChars += (group.length > 1 ? PARAGRAPH_BREAK.length : 0) + para.length;
  });
  flush(paragraphs.length - 1);
  return out;
}

function startsGroup(paragraph: string, every: number): boolean {
  if (every <= 1) return true;
  const opening = paragraph.slice(0, 40);
  return createHash("sha1").update(opening).digest().readUInt32BE(0) % every === 0;
}

/**
 * Runs chunks with at most `limit` in flight. On the first failure no further chunk starts; a
 * permanent failure also cancels the ones in flight, a retryable one lets them finish so that
 * their audio is kept for the next attempt.
 */
async function synthesizeMissing(
  pending: number[],
  limit: number,
  signal: AbortSignal,
  synth: (i: number, signal: AbortSignal) => Promise<void>,
): Promise<void> {
  const inner = new AbortController();
  const onAbort = () => inner.abort(signal.reason);
  signal.addEventListener("abort", onAbort, { once: true });
  let failure: unknown;
  let next = 0;
  const worker = async () => {
    while (next < pending.length && failure === undefined && !inner.signal.aborted) {
      const i = pending[next++];
      try {
        await synth(i, inner.signal);
      } catch (e) {
        if (failure === undefined) failure = e;
        if (!(e instanceof ProviderError) || !e.retryable) inner.abort(e);
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, pending.length)) }, worker));
  } finally {
    signal.removeEventListener("abort", onAbort);
  }
  signal.throwIfAborted();
  if (failure !== undefined) throw failure;
}

export async function renderWithProviders(article: ProviderArticle, router: SpeechRouter, opts: ProviderRenderOptions = {}): Promise<ProviderRenderResult> {
  const { lang, paragraphs } = prepareArticle(article);
  if (paragraphs.length === 0) throw new RenderInputError("The article has no readable text");
  const signal = opts.signal ?? new AbortController().signal;
  // Audio already made per provider survives a retry even without a cache.
  const made = new Map<string, { chunks: TextChunk[]; audio: Buffer[] }>();

  const { result, step } = await router.run(
    article.voice,
    lang,
    async (step, sig) => {
      const id = `${step.provider.name}/${step.voice}`;
      let plan = made.get(id);
      if (!plan) {
        const maxChars = Math.min(router.chunkChars(step.provider), opts.maxChunkChars ?? Number.MAX_SAFE_INTEGER);
        const chunks = planChunks(paragraphs, lang, maxChars, { openingChars: opts.openingChunkChars, packParagraphs: step.provider.name !== "local" });
        plan = { chunks, audio: new Array<Buffer>(chunks.length) };
        made.set(id, plan);
      }
      const { chunks, audio } = plan;
      const pending = chunks.map((_, i) => i).filter((i) => !audio[i]);
      await synthesizeMissing(pending, router.concurrency(step.provider), sig, async (i, s) => {
        audio[i] = await router.synthesize(step, { text: chunks[i].text, lang, prompt: article.prompt, pronunciations: article.pronunciations }, s);
      });
      return plan;
    },
    {
      signal,
      onRetry: (error, _step, fallback) => opts.onRetry?.(error, fallback),
      onFallback: (error, next) => opts.onFallback?.(error, next.provider.label ?? next.provider.name),
    },
  );

  // The first chunk sets the article's stream; only chunks in another stream are re-encoded.
  const target = streamFormat(result.audio[0]);
  if (!target) throw new Error("The first chunk has no MPEG audio frames");
  let reencoded = 0;
  const audio = await Promise.all(
    result.audio.map(async (mp3) => {
      const f = streamFormat(mp3);
      if (f && sameStreamFormat(f, target)) return mp3;
      reencoded++;
      return reencode(mp3, target);
    }),
  );
  const titlePause = silenceFrames(target, opts.titlePauseMs ?? 700);
  const paragraphPause = silenceFrames(target, opts.paragraphPauseMs ?? 400);
  const r = assemble(result.chunks, audio, titlePause, paragraphPause, opts.previewSeconds ?? 30);
  return { ...r, provider: step.provider.label ?? step.provider.name, reencoded };
}
