// Article → MP3: prepare the text, synthesize chunks concurrently, join them
// at frame level with pauses, and cut the preview from the same audio at a
// chunk (sentence) boundary.
import { LANGS, type Lang } from "../../lib/voices.js";
import type { SpeechEngine } from "./engine/index.js";
import { joinMp3, mp3Duration } from "./mp3/index.js";
import { packChunks, prepareText, type TextChunk } from "./text/index.js";

export interface ArticleContent {
  title: string;
  text: string;
  lang: string;
  voice: string;
  parse?: boolean;
  isRaw?: boolean;
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
  if (!(LANGS as readonly string[]).includes(article.lang)) throw new RenderInputError(`Unsupported language '${article.lang}'; one of: ${LANGS.join(", ")}`);
  const lang = article.lang as Lang;
  const paragraphs = prepareText({ title: article.title, text: article.text, lang, parse: article.parse, isRaw: article.isRaw });
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
        const mp3 = await engine.synthesize({ text: chunk.text, voice: article.voice, lang }, inner.signal);
        opts.onProgress?.(++done, chunks.length);
        return mp3;
      } catch (e) {
        inner.abort(e);
        throw e;
      }
    });

    const parts: Buffer[] = [];
    const endTimes: number[] = [];
    const partsThrough: number[] = [];
    let t = 0;
    chunks.forEach((chunk, i) => {
      parts.push(audio[i]);
      t += mp3Duration(audio[i]);
      endTimes.push(t);
      partsThrough.push(parts.length);
      if (chunk.paragraphEnd && i < chunks.length - 1) {
        const pause = chunk.paragraph === 0 ? titlePause : paragraphPause;
        parts.push(pause);
        t += mp3Duration(pause);
      }
    });

    const full = joinMp3(parts);
    const last = previewEnd(chunks, endTimes, opts.previewSeconds ?? 30);
    const preview = last === chunks.length - 1 ? full : joinMp3(parts.slice(0, partsThrough[last]));
    return { full, fullDuration: mp3Duration(full), preview, previewDuration: mp3Duration(preview), chunks: chunks.length };
  } finally {
    opts.signal?.removeEventListener("abort", onAbort);
  }
}
