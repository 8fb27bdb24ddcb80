// Which provider speaks an article, and what happens when it fails: retries
// with backoff on the same provider, then the fallback chain, all bounded.
import type { LoudnessTarget } from "../loudness/index.js";
import type { Logger } from "../../../lib/log.js";
import { voiceInfo, type Lang, type ProviderName } from "../../../lib/voices.js";
import { localEngineFor, type EnginesLoaded } from "../engine/catalog.js";
import type { SpeechEngine } from "../engine/types.js";
import { chunkKey, noCache, type ChunkCache } from "../cache/index.js";
import { retryDelay, sleep, type BackoffOptions } from "./backoff.js";
import { ProviderError } from "./errors.js";
import { Semaphore } from "./semaphore.js";
import type { ProviderRequest, SpeechProvider } from "./types.js";
import { mapVoice } from "./voice-map.js";

export interface ChainStep {
  provider: SpeechProvider;
  /** The voice this provider uses for the article. */
  voice: string;
}

export interface SpeechRouterOptions {
  /** Loudness every file is normalised to (default -19 LUFS, -1 dBTP). */
  loudness?: LoudnessTarget;
  /**
   * Cloud providers whose credentials are configured; the local engine (eSpeak) is always there,
   * and the better local engines that loaded (named "local" as well: the local step of the chain
   * tries the best one that speaks the voice, then eSpeak; see engine/catalog.ts).
   */
  providers: { openai?: SpeechProvider; azure?: SpeechProvider; local: SpeechProvider; kokoro?: SpeechProvider; pico?: SpeechProvider };
  /** Engines the router owns beside the providers: closed by close(). */
  engines?: SpeechEngine[];
  /** Order tried after the voice's own provider fails. Default openai, azure, local. */
  fallback?: ProviderName[];
  /** Requests per provider before moving on (first try included). Default 3. */
  attempts?: number;
  backoff?: Partial<BackoffOptions>;
  /** Wall time per article after which no provider is retried any more. Default 10 minutes. */
  budgetMs?: number;
  /** Chunks of one article in flight at a cloud provider. Default 32. */
  articleConcurrency?: number;
  /** Chunks of one article at once on the local engine (its thread pool is the real bound). Default 2. */
  localConcurrency?: number;
  /** Chunk requests in flight across all articles of this worker process. Default 64. */
  workerConcurrency?: number;
  /** Upper bound of a cloud request's text, below the provider's own limit. */
  chunkChars?: number;
  cache?: ChunkCache;
  log?: Logger;
}

/** Every provider in the chain failed; `message` is the last error. */
export class ChainExhaustedError extends Error {
  override name = "ChainExhaustedError";
}

export interface ChainHooks {
  signal: AbortSignal;
  /** A retryable failure; `fallback` is true when the failing provider is itself a fallback. */
  onRetry?(error: string, step: ChainStep, fallback: boolean): Promise<void> | void;
  /** `error` ended the previous provider; `next` takes over. */
  onFallback?(error: string, next: ChainStep): Promise<void> | void;
}

export interface SpeechRouter {
  readonly loudness?: LoudnessTarget;
  readonly attempts: number;
  chain(voice: string, lang: Lang): ChainStep[];
  /** Chunks of one article synthesized at once with this provider. */
  concurrency(provider: SpeechProvider): number;
  /** Longest text per request for this provider. */
  chunkChars(provider: SpeechProvider): number;
  /** One chunk: from the cache, or from the provider under the worker-wide bound (then cached); `onData` as SpeechProvider's, not called on a cache hit. */
  synthesize(step: ChainStep, req: Omit<ProviderRequest, "voice">, signal: AbortSignal, onData?: (bytes: Uint8Array) => void): Promise<Buffer>;
  /** Runs `render` with each provider of the chain until one succeeds. */
  run<T>(voice: string, lang: Lang, render: (step: ChainStep, signal: AbortSignal) => Promise<T>, hooks: ChainHooks): Promise<{ result: T; step: ChainStep }>;
  readonly stats: { hits: number; misses: number };
  /** The providers it was given beside eSpeak: what GET /api/voices says is available. */
  readonly loaded: EnginesLoaded;
  /** Closes the engines it owns (the Kokoro host...). */
  close(): Promise<void>;
}

const positive = (name: string, v: number | undefined, dflt: number) => {
  const n = v ?? dflt;
  if (!Number.isFinite(n) || n < 0) throw new RangeError(`${name} must be a number >= 0, got ${n}`);
  return n;
};

export function createSpeechRouter(opts: SpeechRouterOptions): SpeechRouter {
  const attempts = Math.max(1, Math.floor(positive("attempts", opts.attempts, 3)));
  const backoff: BackoffOptions = {
    baseMs: positive("backoff.baseMs", opts.backoff?.baseMs, 500),
    maxMs: positive("backoff.maxMs", opts.backoff?.maxMs, 20_000),
    retryAfterCapMs: positive("backoff.retryAfterCapMs", opts.backoff?.retryAfterCapMs, 30_000),
  };
  const budgetMs = positive("budgetMs", opts.budgetMs, 600_000);
  const articleConcurrency = Math.max(1, Math.floor(positive("articleConcurrency", opts.articleConcurrency, 32)));
  const localConcurrency = Math.max(1, Math.floor(positive("localConcurrency", opts.localConcurrency, 2)));
  const gate = new Semaphore(Math.max(1, Math.floor(positive("workerConcurrency", opts.workerConcurrency, 64))));
  const cache = opts.cache ?? noCache;
  const fallback = opts.fallback ?? ["openai", "azure", "local"];
  const stats = { hits: 0, misses: 0 };

  const configured = (name: ProviderName): SpeechProvider | undefined => opts.providers[name];
  const loaded = { kokoro: !!opts.providers.kokoro, pico: !!opts.providers.pico, openai: !!opts.providers.openai, azure: !!opts.providers.azure };

  /** The local providers for a voice, best first: the engine the catalog picks, then eSpeak. */
  function local(voice: string, lang: Lang): SpeechProvider[] {
    const best = localEngineFor(voice, lang, loaded);
    const better = best === "espeak" ? undefined : opts.providers[best];
    return better ? [better, opts.providers.local] : [opts.providers.local];
  }

  function chain(voice: string, lang: Lang): ChainStep[] {
    const own = voiceInfo(voice)?.provider;
    const first: ProviderName = own && configured(own) ? own : "local";
    const steps: ChainStep[] = [];
    for (const name of [first, ...fallback]) {
      const providers = name === "local" ? local(voice, lang) : [configured(name)];
      for (const provider of providers) {
        if (!provider || steps.some((s) => s.provider === provider)) continue;
        const mapped = mapVoice(voice, lang, name);
        if (mapped) steps.push({ provider, voice: mapped });
      }
    }
    return steps;
  }

  const { openai, azure, kokoro, pico } = opts.providers;
  return {
    attempts,
    loudness: opts.loudness,
    stats,
    loaded: { openai: !!openai, azure: !!azure, kokoro: !!kokoro, pico: !!pico },
    chain,
    concurrency: (p) => (p.name === "local" ? Math.max(1, Math.min(localConcurrency, p.concurrency ?? localConcurrency)) : articleConcurrency),
    chunkChars: (p) => (p.name === "local" ? p.maxChars : Math.min(p.maxChars, opts.chunkChars ?? p.maxChars)),

    async close() {
      await Promise.all((opts.engines ?? []).map((e) => e.close()));
    },

    async synthesize(step, partial, signal, onData) {
      const req: ProviderRequest = { ...partial, voice: step.voice };
      const p = step.provider;
      const key = chunkKey({ provider: p.name, model: p.model(req), voice: req.voice, lang: req.lang, prompt: p.usesPrompt ? req.prompt : undefined, text: req.text, pronunciations: req.pronunciations });
      const asked = performance.now();
      const hit = await cache.get(key).catch(() => undefined);
      if (hit) {
        stats.hits++;
        opts.log?.debug({ provider: p.label ?? p.name, chars: req.text.length, ms: Math.round(performance.now() - asked) }, "speech chunk from the cache");
        return hit;
      }
      stats.misses++;
      const mp3 = await gate.with(signal, () => p.synthesize(req, signal, onData));
      opts.log?.debug({ provider: p.label ?? p.name, chars: req.text.length, ms: Math.round(performance.now() - asked) }, "speech chunk rendered");
      // A full disk must not fail the article: the cache is only a saving.
      await cache.put(key, mp3).catch((e) => opts.log?.warn({ err: (e as Error).message }, "chunk cache write failed"));
      return mp3;
    },

    async run(voice, lang, render, hooks) {
      const steps = chain(voice, lang);
      if (steps.length === 0) throw new ChainExhaustedError(`No configured speech provider speaks '${voice}' in '${lang}'`);
      const started = Date.now();
      let last = "";
      for (let i = 0; i < steps.length; i++) {
        const step = steps[i];
        if (i > 0) await hooks.onFallback?.(last, step);
        for (let attempt = 1; ; attempt++) {
          hooks.signal.throwIfAborted();
          try {
            return { result: await render(step, hooks.signal), step };
          } catch (e) {
            if (hooks.signal.aborted) throw hooks.signal.reason;
            if (!(e instanceof ProviderError)) throw e;
            last = `${step.provider.name}: ${e.message}`;
            opts.log?.warn({ provider: step.provider.name, attempt, retryable: e.retryable, err: last }, "speech provider failed");
            if (!e.retryable || attempt >= attempts) break;
            const delay = retryDelay(attempt, backoff, e.retryAfterMs);
            // Past the budget the rest of the chain still gets one try each, so the loop stays bounded.
            if (Date.now() - started + delay > budgetMs) break;
            await hooks.onRetry?.(last, step, i > 0);
            await sleep(delay, hooks.signal);
          }
        }
      }
      throw new ChainExhaustedError(last);
    },
  };
}
