// Article → MP3: prepare the text, synthesize chunks concurrently, join them
// at frame level with pauses, and cut the preview from the same audio at a
// chunk (sentence) boundary.
import type { PronunciationRule } from "../../lib/pronunciations.js";
import { LANGS, type Lang } from "../../lib/voices.js";
import type { SpeechEngine } from "./engine/index.js";
import { DEFAULT_LOUDNESS, Mp3Meter, checkTarget, combine, finishMeter, meterMp3, normalizeMp3, type LoudnessMeter, type LoudnessTarget } from "./loudness/index.js";
import { durationSteps, id3Tag, joinMp3InSlices, mp3Duration, silenceFrames, tagMp3, type Mp3Tags } from "./mp3/index.js";
import { finishInSlices, timeSlicer } from "../../lib/slices.js";
import { ProviderError } from "./providers/errors.js";
import { engineText, takesPhonemes } from "./providers/local.js";
import { reencode, sameStreamFormat, streamFormat } from "./providers/reformat.js";
import type { SpeechRouter } from "./providers/router.js";
import type { PlanOptions, TextChunk } from "./text/chunks.js";
import type { PreparedParagraph } from "./text/index.js";
import type { TimedSegment } from "../../lib/segments.js";
import { alignChunk, timedSegments } from "./segments/index.js";
import type { PieceTime } from "./segments/align.js";
import { rulesWithoutReserved } from "./text/pronounce.js";
import { inlineTextWork, TextRejectedError, type TextWork } from "./text/work.js";
import { LiveParts, type LivePart } from "./live-parts.js";

export { PARAGRAPH_BREAK, planChunks, type PlanOptions } from "./text/chunks.js";

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
  /** Silence before the first word and after the last. */
  leadInMs?: number;
  tailMs?: number;
  /** ID3v2.4 tags written in front of both files. */
  tags?: Mp3Tags;
  /** Loudness every file is brought to (default -19 LUFS, true peak -1 dBTP); null leaves the local engine's raw level (comparisons only). */
  loudness?: LoudnessTarget | null;
  /** Called after each synthesized chunk, e.g. to keep a job lease alive. */
  onProgress?(done: number, total: number): void;
  /**
   * Where text preparation and chunk planning run: a services' thread pool with a deadline
   * (text/work.ts), else on the calling thread. `project` takes its turn in the pool.
   */
  text?: { work: TextWork; project: string };
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
  /** Where the title, each paragraph and each sentence are heard in `full`. */
  segments: TimedSegment[];
  /**
   * Time spent finding them (reading the chunks' frames, aligning sentences to pauses), ms: in all,
   * and after the last chunk was there (the provider path aligns each chunk as it arrives).
   */
  segmentsMs: { total: number; atEnd: number };
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

/** Pauses (ms) that carry the article's structure; a paragraph pause is clearly longer than any voice's pause between sentences. */
export const PAUSES = Object.freeze({ leadInMs: 300, titleMs: 900, paragraphMs: 800, tailMs: 800 });

/**
 * Index of the last chunk the preview keeps: a chunk that ends a sentence, ending as near
 * previewSeconds as possible within [5/6, 4/3] of it (25-40 s for 30 s), never before the title
 * and the first body sentence. An article not much longer than that is its own preview.
 */
function previewEnd(chunks: TextChunk[], endTimes: number[], previewSeconds: number, opening = false): number {
  const lo = (previewSeconds * 5) / 6;
  const hi = (previewSeconds * 4) / 3;
  const lastIndex = chunks.length - 1;
  // `opening`: the chunks are the first of a longer article, which is not its own preview.
  if (!opening && endTimes[lastIndex] <= hi) return lastIndex;
  const firstBody = chunks.findIndex((c) => c.paragraph > 0);
  if (firstBody === -1) return lastIndex;
  let best = -1;
  let bestScore = Infinity;
  for (let i = firstBody; i < chunks.length; i++) {
    if (chunks[i].sentenceEnd === false && i !== lastIndex) continue;
    const t = endTimes[i];
    // Distance outside the window first, then closeness to the aim.
    const score = (t < lo ? lo - t : t > hi ? t - hi : 0) * 1000 + Math.abs(t - previewSeconds);
    if (score < bestScore) {
      best = i;
      bestScore = score;
    }
    if (t > hi) break;
  }
  return best === -1 ? lastIndex : best;
}

export async function renderArticle(article: ArticleContent, engine: SpeechEngine, opts: RenderOptions = {}): Promise<RenderResult> {
  const { lang, paragraphs, rules, plan } = await prepareArticle(article, opts.text);
  const maxChars = opts.maxChunkChars ?? 300;
  // Sentences stay whole (a cut gives them a sentence-final fall), up to what a request may hold.
  const chunks = await plan(maxChars, { openingChars: Math.min(LOCAL_OPENING_CHARS, maxChars), hardMax: Math.max(maxChars, LOCAL_SENTENCE_CHARS) });
  if (chunks.length === 0) throw new RenderInputError("The article has no readable text");
  const level = opts.loudness === undefined ? DEFAULT_LOUDNESS : opts.loudness;
  const problem = level && checkTarget(level);
  if (problem) throw new RenderInputError(problem);

  // One failed chunk makes the whole render fail: stop the others early.
  const inner = new AbortController();
  const onAbort = () => inner.abort(opts.signal?.reason);
  opts.signal?.addEventListener("abort", onAbort, { once: true });
  if (opts.signal?.aborted) onAbort();
  let done = 0;
  try {
    const pauses = await pauseParts((ms) => engine.silence(ms), opts);
    const audio = await mapBounded(chunks, opts.concurrency ?? 2, inner.signal, async (chunk) => {
      try {
        const text = engineText(chunk.text, rules, lang, takesPhonemes(engine));
        const mp3 = await engine.synthesize({ text, voice: article.voice, lang, level }, inner.signal);
        opts.onProgress?.(++done, chunks.length);
        return mp3;
      } catch (e) {
        inner.abort(e);
        throw e;
      }
    });
    return await assemble(paragraphs, chunks, audio, pauses, opts.previewSeconds ?? 30, opts.tags);
  } finally {
    opts.signal?.removeEventListener("abort", onAbort);
  }
}

// The local engine: opening chunks of a sentence or two, so the preview has sentence ends every
// few seconds to choose from; eSpeak takes a long sentence whole.
const LOCAL_OPENING_CHARS = 150;
const LOCAL_SENTENCE_CHARS = 1500;

/** The pauses a render was given, leaving out those it was not. */
function definedPauses(opts: RenderOptions): Partial<typeof PAUSES> {
  const given = { leadInMs: opts.leadInMs, titleMs: opts.titlePauseMs, paragraphMs: opts.paragraphPauseMs, tailMs: opts.tailMs };
  return Object.fromEntries(Object.entries(given).filter(([, v]) => v !== undefined));
}

interface PauseParts {
  leadIn: Buffer;
  title: Buffer;
  paragraph: Buffer;
  tail: Buffer;
}

async function pauseParts(silence: (ms: number) => Promise<Buffer> | Buffer, opts: RenderOptions): Promise<PauseParts> {
  const [leadIn, title, paragraph, tail] = await Promise.all([
    silence(opts.leadInMs ?? PAUSES.leadInMs),
    silence(opts.titlePauseMs ?? PAUSES.titleMs),
    silence(opts.paragraphPauseMs ?? PAUSES.paragraphMs),
    silence(opts.tailMs ?? PAUSES.tailMs),
  ]);
  return { leadIn, title, paragraph, tail };
}

interface PreparedArticle {
  lang: Lang;
  paragraphs: PreparedParagraph[];
  /** The article's rules as its chunks' marks name them (text/pronounce.ts): what providers render. */
  rules?: readonly PronunciationRule[];
  /** Chunks of the paragraphs, where the text work runs. */
  plan(maxChars: number, opts: PlanOptions): Promise<TextChunk[]>;
}

async function prepareArticle(article: ArticleContent, where?: RenderOptions["text"]): Promise<PreparedArticle> {
  if (!(LANGS as readonly string[]).includes(article.lang)) throw new RenderInputError(`Unsupported language '${article.lang}'; one of: ${LANGS.join(", ")}`);
  const lang = article.lang as Lang;
  const work = where?.work ?? inlineTextWork;
  const project = where?.project ?? "";
  const rules = article.pronunciations && rulesWithoutReserved(article.pronunciations);
  const input = { title: article.title, text: article.text, lang, parse: article.parse, isRaw: article.isRaw, pronunciations: rules };
  const paragraphs = await final(work.prepare(project, input));
  const spoken = paragraphs.map((p) => p.spoken);
  return { lang, paragraphs, rules, plan: (maxChars, opts) => final(work.plan(project, spoken, lang, maxChars, opts)) };
}

/** Text work past its deadline (or failing on this text) fails the render for good: another attempt would do the same. */
async function final<T>(p: Promise<T>): Promise<T> {
  try {
    return await p;
  } catch (e) {
    if (e instanceof TextRejectedError) throw new RenderInputError(`${e.reason[0].toUpperCase()}${e.reason.slice(1)} (the article's text and its pronunciation rules are more than the audio service prepares for speech)`);
    throw e;
  }
}

/** Chunks aligned as they arrived, and the time that took. */
interface Aligned {
  chunks: (PieceTime[] | undefined)[];
  alignMs: number;
}

interface Assembled extends RenderResult {
  /** Chunks the preview holds. */
  previewChunks: number;
}

interface Timeline {
  /** Lead-in, chunks and the pauses between them, in playing order (no tail). */
  parts: Buffer[];
  /** Seconds at the end of each chunk. */
  endTimes: number[];
  /** Seconds of each chunk's audio. */
  seconds: number[];
  /** Parts up to and including each chunk. */
  partsThrough: number[];
  joins: Join[];
  /** Seconds at the end of the last chunk. */
  end: number;
}

async function timeline(chunks: TextChunk[], audio: Buffer[], pauses: PauseParts): Promise<Timeline> {
  const parts: Buffer[] = [pauses.leadIn];
  const endTimes: number[] = [];
  const partsThrough: number[] = [];
  const joins: Join[] = [];
  const seconds = await finishInSlices(durationSteps(audio));
  let t = mp3Duration(pauses.leadIn);
  chunks.forEach((chunk, i) => {
    parts.push(audio[i]);
    t += seconds[i];
    endTimes.push(t);
    partsThrough.push(parts.length);
    if (i === chunks.length - 1) return;
    const join: Join = { seconds: t, pauseSeconds: 0 };
    if (chunk.paragraphEnd) {
      const pause = chunk.paragraph === 0 ? pauses.title : pauses.paragraph;
      parts.push(pause);
      join.pauseSeconds = mp3Duration(pause);
      t += join.pauseSeconds;
    }
    joins.push(join);
  });
  return { parts, endTimes, seconds, partsThrough, joins, end: t };
}

/**
 * The preview from the opening chunks alone, before the rest exist, cut exactly where
 * assemble() will cut it once all are there: only when the chunks in hand already pass the
 * preview window by a whole chunk (so the cut cannot depend on the ones to come).
 */
async function assemblePreview(chunks: TextChunk[], opening: Buffer[], pauses: PauseParts, previewSeconds: number, tags?: Mp3Tags): Promise<{ mp3: Buffer; duration: number; chunks: number } | undefined> {
  const n = opening.length;
  if (n < 2 || n >= chunks.length) return undefined;
  const head = chunks.slice(0, n);
  const firstBody = head.findIndex((c) => c.paragraph > 0);
  if (firstBody === -1) return undefined;
  const { parts, endTimes, partsThrough } = await timeline(head, opening, pauses);
  const hi = (previewSeconds * 4) / 3;
  const isEnd = (i: number) => i >= firstBody && head[i].sentenceEnd !== false;
  // previewEnd stops at the first sentence end past the window: the chunks to come cannot change the cut.
  const passed = endTimes.some((t, i) => isEnd(i) && t > hi);
  // Or the last chunk in hand ends a sentence past the aim, inside the window: every later end is
  // further from the aim. (Unless the whole article stays inside the window, when it is its own
  // preview: the text still to speak must take it past the window even at a brisk 25 characters a second.)
  const last = endTimes[n - 1];
  const rest = chunks.slice(n).reduce((sum, c) => sum + c.text.length, 0);
  const nearest = isEnd(n - 1) && last >= previewSeconds && last <= hi && last + rest / 25 > hi;
  if (!passed && !nearest) return undefined;
  const cut = previewEnd(head, endTimes, previewSeconds, true);
  const mp3 = await joinMp3InSlices([...parts.slice(0, partsThrough[cut]), pauses.tail], tags && id3Tag(tags));
  return { mp3, duration: endTimes[cut] + mp3Duration(pauses.tail), chunks: cut + 1 };
}

/** Works in slices of a few milliseconds: hours of audio are hundreds of megabytes to scan and copy beside other projects' requests. */
async function assemble(paragraphs: PreparedParagraph[], chunks: TextChunk[], audio: Buffer[], pauses: PauseParts, previewSeconds: number, tags?: Mp3Tags, aligned?: Aligned): Promise<Assembled> {
  const { parts, endTimes, seconds, partsThrough, joins, end: t } = await timeline(chunks, audio, pauses);
  const segmentsStarted = performance.now();
  const segments = await timedSegments(paragraphs, chunks, audio, seconds.map((duration, i) => ({ start: endTimes[i] - duration, duration })), aligned?.chunks);
  const atEnd = performance.now() - segmentsStarted;
  const segmentsMs = { total: atEnd + (aligned?.alignMs ?? 0), atEnd };
  const tail = mp3Duration(pauses.tail);
  const tag = tags && id3Tag(tags);
  const full = await joinMp3InSlices([...parts, pauses.tail], tag);
  const last = previewEnd(chunks, endTimes, previewSeconds);
  const whole = last === chunks.length - 1;
  const preview = whole ? full : await joinMp3InSlices([...parts.slice(0, partsThrough[last]), pauses.tail], tag);
  // Frame durations summed part by part: the joined file holds exactly these frames, and a
  // second scan of an hour of audio would only cost memory.
  return { full, fullDuration: t + tail, preview, previewDuration: (whole ? t : endTimes[last]) + tail, chunks: chunks.length, joins, segments, segmentsMs, previewChunks: last + 1 };
}

// ---- Through the provider router: cache, retries, fallback chain ----

export interface ProviderArticle extends ArticleContent {
  prompt?: string;
}

export interface ProviderRenderOptions extends Omit<RenderOptions, "concurrency" | "onProgress" | "loudness"> {
  /** Default: the router's, else -19 LUFS / -1 dBTP. null: cloud audio is neither measured nor normalised (comparisons only; the local engine levels to the default). */
  loudness?: LoudnessTarget | null;
  /** A retryable failure; `fallback` tells whether a fallback provider is the one failing. */
  onRetry?(error: string, fallback: boolean): Promise<void> | void;
  /** The previous provider gave up with `error`; `provider` takes over. */
  onFallback?(error: string, provider: string): Promise<void> | void;
  /** Text of the opening chunks (title and first body chunks), kept small so the preview can end early. */
  openingChunkChars?: number;
  /**
   * Someone waits (audio on demand): called once with the preview as soon as the opening chunks
   * settle it, before the rest are rendered. It is the preview the result holds. The render
   * waits for the promise before it resolves; the callback handles its own failures.
   */
  onPreview?(preview: { mp3: Buffer; duration: number }): Promise<void>;
  /**
   * Someone listens while it is made (audio on demand): the finished file's audio, a part per
   * chunk in playing order, as soon as the chunks before it are there (live-parts.ts). Local
   * engines only; it stops when another provider takes over. The callback handles its own failures.
   */
  onLive?(part: LivePart): void;
}

export interface ProviderRenderResult extends RenderResult {
  /** Provider that made the audio ("openai", "azure", or the local engine's name). */
  provider: string;
  /** Chunks whose stream differed from the first chunk's and were re-encoded. */
  reencoded: number;
  /** How the full file reached the loudness target: leveled by the local engine, lossless gain steps, re-encoded, or already on target. */
  loudness: "engine" | "steps" | "reencode" | "none";
  /**
   * Time from the assembled file to the normalised one (waiting for the chunks' meters, gating
   * them together, applying gain), ms. Decoding and metering done while the bodies arrived is not
   * in it; bench/loudness.ts weighs that against a render with `loudness: null`.
   */
  loudnessMs: number;
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
  // A signal that fired before this call (the drain deadline passed while the text was being
  // prepared) sends no event: without the check every chunk would still be rendered.
  signal.throwIfAborted();
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
  const { lang, paragraphs, rules, plan: planFor } = await prepareArticle(article, opts.text);
  if (paragraphs.length === 0) throw new RenderInputError("The article has no readable text");
  const signal = opts.signal ?? new AbortController().signal;
  signal.throwIfAborted();
  const level = opts.loudness === null ? undefined : (opts.loudness ?? router.loudness ?? DEFAULT_LOUDNESS);
  const problem = level && checkTarget(level);
  if (problem) throw new RenderInputError(problem);
  // Audio already made per provider survives a retry even without a cache. A chunk's meter is
  // undefined when its audio could not be measured (it then counts for nothing).
  const live = opts.onLive && new LiveParts({ ...PAUSES, ...definedPauses(opts) }, opts.onLive);
  const made = new Map<string, { chunks: TextChunk[]; audio: Buffer[]; loudness: Promise<LoudnessMeter | undefined>[]; aligned: Aligned; local: boolean }>();
  type Plan = typeof made extends Map<string, infer P> ? P : never;
  // The early preview: looked for after each chunk until found (or found impossible), offered once.
  let previewState: "looking" | "busy" | "given" = opts.onPreview ? "looking" : "given";
  let previewGiven: Promise<void> = Promise.resolve();
  const offerPreview = (plan: Plan) => {
    if (previewState !== "looking") return;
    previewState = "busy";
    previewGiven = earlyPreview(plan).then(
      async (p) => {
        previewState = p === undefined ? "looking" : "given";
        if (p && p !== "never") await opts.onPreview!(p).catch(() => undefined);
      },
      () => void (previewState = "given"),
    );
  };
  /** The preview from the chunks in hand, leveled as the final one will be; undefined: not yet; "never": not before the whole render. */
  async function earlyPreview(plan: Plan): Promise<{ mp3: Buffer; duration: number } | undefined | "never"> {
    const missing = plan.audio.findIndex((a) => !a);
    const opening = plan.audio.slice(0, missing === -1 ? plan.audio.length : missing);
    if (opening.length < 2) return undefined;
    const target = streamFormat(opening[0]);
    // Chunks in another stream are re-encoded at the end: such a preview waits for it.
    if (!target || opening.some((a) => !sameStreamFormat(streamFormat(a) ?? target, target))) return "never";
    const pauses = await pauseParts((ms) => silenceFrames(target, ms), opts);
    const cut = await assemblePreview(plan.chunks, opening, pauses, opts.previewSeconds ?? 30, opts.tags);
    if (!cut) return missing === -1 ? "never" : undefined;
    if (plan.local || !level) return { mp3: cut.mp3, duration: cut.duration };
    const meters = (await Promise.all(plan.loudness.slice(0, cut.chunks))).filter((m): m is LoudnessMeter => m !== undefined);
    const n = await normalizeMp3(cut.mp3, combine(meters), level);
    if (n.method !== "reencode") return { mp3: n.mp3, duration: cut.duration };
    return { mp3: opts.tags ? tagMp3(n.mp3, opts.tags) : n.mp3, duration: mp3Duration(n.mp3) };
  }
  try {
    return await renderMade();
  } finally {
    // Every chunk's meter, of the provider that made the file and of any that gave up before it.
    for (const plan of made.values()) for (const m of plan.loudness) void m?.then((meter) => meter?.release());
  }

  async function renderMade(): Promise<ProviderRenderResult> {
    const { result, step } = await router.run(
      article.voice,
      lang,
      async (step, sig) => {
        const id = `${step.provider.label ?? step.provider.name}/${step.voice}`;
        let plan = made.get(id);
        if (!plan) {
          const local = step.provider.name === "local";
          const maxChars = Math.min(router.chunkChars(step.provider), opts.maxChunkChars ?? Number.MAX_SAFE_INTEGER);
          const chunks = local
            ? await planFor(maxChars, { openingChars: Math.min(opts.openingChunkChars ?? LOCAL_OPENING_CHARS, maxChars), hardMax: Math.max(maxChars, LOCAL_SENTENCE_CHARS) })
            : await planFor(maxChars, { openingChars: opts.openingChunkChars, packParagraphs: true });
          plan = { chunks, audio: new Array<Buffer>(chunks.length), loudness: new Array(chunks.length), aligned: { chunks: new Array(chunks.length), alignMs: 0 }, local };
          made.set(id, plan);
        }
        const { chunks, audio, loudness, aligned, local } = plan;
        const pending = chunks.map((_, i) => i).filter((i) => !audio[i]);
        await synthesizeMissing(pending, router.concurrency(step.provider), sig, async (i, s) => {
          // Decoded and metered while the body downloads (and the other requests are still out), so
          // little of it is left for the end. The local engine levels its own PCM before encoding
          // and needs no measurement.
          const stream = local || !level ? undefined : new Mp3Meter();
          try {
            audio[i] = await router.synthesize(step, { text: chunks[i].text, lang, prompt: article.prompt, pronunciations: rules, level }, s, stream?.push);
          } catch (e) {
            stream?.abort();
            throw e;
          }
          // From the chunk cache nothing streamed: finishMeter measures it whole, or finds it by content.
          if (stream) loudness[i] = finishMeter(stream, audio[i]).catch(() => undefined);
          // Its sentences are placed now, while other answers are awaited, not after the last one.
          if (chunks[i].pieces.length > 1) {
            const started = performance.now();
            aligned.chunks[i] = alignChunk(chunks[i], audio[i]);
            aligned.alignMs += performance.now() - started;
          }
          live?.offer(id, local, chunks, audio);
          offerPreview(plan!);
          // A local engine's next chunk waits for the look at the preview (a few ms of joining
          // frames; then storing it, if found): a caller that stops the render once it has its
          // preview (the preview lane) stops it before another chunk is begun and thrown away.
          if (local) await previewGiven;
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
    // Checked one chunk after another with turns of the event loop between (each check scans the chunk).
    const audio = [...result.audio];
    const reencoding: Promise<void>[] = [];
    const turn = timeSlicer();
    for (const [i, mp3] of result.audio.entries()) {
      await turn();
      const f = streamFormat(mp3);
      if (f && sameStreamFormat(f, target)) continue;
      reencoded++;
      const done = (async () => {
        const same = await reencode(mp3, target);
        if (!result.local && level) {
          void result.loudness[i]?.then((m) => m?.release());
          result.loudness[i] = meterMp3(same).catch(() => undefined);
        }
        audio[i] = same;
        result.aligned.chunks[i] = undefined;
      })();
      // Awaited below; handled now, as the loop may still yield before a failure is awaited.
      done.catch(() => undefined);
      reencoding.push(done);
    }
    await Promise.all(reencoding);
    const pauses = await pauseParts((ms) => silenceFrames(target, ms), opts);
    const r = await assemble(paragraphs, result.chunks, audio, pauses, opts.previewSeconds ?? 30, opts.tags, result.aligned);
    let loudnessMethod: ProviderRenderResult["loudness"] = level ? "engine" : "none";
    const loudnessStarted = performance.now();
    if (!result.local && level) {
      const meters = await Promise.all(result.loudness);
      const measuredIn = (n: number) => combine(meters.slice(0, n).filter((m): m is LoudnessMeter => m !== undefined));
      const full = await normalizeMp3(r.full, measuredIn(meters.length), level);
      const preview = r.preview === r.full ? full : await normalizeMp3(r.preview, measuredIn(r.previewChunks), level);
      loudnessMethod = full.method;
      // A re-encoded file is new: it gets its tag again.
      const retag = (n: { mp3: Buffer; method: string }) => (n.method === "reencode" && opts.tags ? tagMp3(n.mp3, opts.tags) : n.mp3);
      if (full.method === "reencode") r.fullDuration = mp3Duration(full.mp3);
      if (preview.method === "reencode") r.previewDuration = mp3Duration(preview.mp3);
      r.full = retag(full);
      r.preview = preview === full ? r.full : retag(preview);
    }
    // The stored preview must be there before the result that names it.
    await previewGiven;
    const { previewChunks: _, ...rest } = r;
    const loudnessMs = performance.now() - loudnessStarted;
    return { ...rest, provider: step.provider.label ?? step.provider.name, reencoded, loudness: loudnessMethod, loudnessMs };
  }
}
