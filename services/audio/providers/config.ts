// Provider configuration from the environment (documented in docs/providers.md).
import path from "node:path";
import { ConfigError, loadConfig } from "../../../lib/config.js";
import { LOUDNESS_RANGE } from "../../../lib/loudness.js";
import type { Logger } from "../../../lib/log.js";
import type { ProviderName } from "../../../lib/voices.js";
import { openDiskCache } from "../cache/index.js";
import { keepMetersIn } from "../loudness/index.js";
import type { SpeechEngine } from "../engine/index.js";
import { createKokoroEngine } from "../engine/kokoro/index.js";
import { createPicoEngine } from "../engine/pico/index.js";
import { createAzureProvider } from "./azure.js";
import { localProvider } from "./local.js";
import { createOpenAiProvider } from "./openai.js";
import { createSpeechRouter, type SpeechRouter } from "./router.js";

export const PROVIDER_VARS = {
  OPENAI_API_KEY: { type: "string", description: "OpenAI API key; enables the OpenAI voices" },
  OPENAI_BASE_URL: { type: "string", format: "uri", default: "https://api.openai.com/v1", description: "OpenAI API base URL" },
  OPENAI_TTS_MODEL: { type: "string", pattern: "^\\S+$", default: "tts-1", description: "speech model for articles without a prompt" },
  AZURE_SPEECH_KEY: { type: "string", description: "Azure Speech subscription key; enables the Azure voices" },
  AZURE_SPEECH_REGION: { type: "string", pattern: "^[A-Za-z0-9-]+$", description: "Azure region, e.g. westeurope" },
  AZURE_SPEECH_ENDPOINT: { type: "string", format: "uri", description: "full Azure TTS endpoint URL (instead of the region)" },
  AUDIO_FALLBACK: { type: "string", pattern: "^\\s*((openai|azure|local)\\s*(,\\s*(openai|azure|local)\\s*)*)?$", default: "openai,azure,local", emptyIsValue: true, description: "fallback chain after the voice's own provider (empty: none)" },
  AUDIO_PROVIDER_ATTEMPTS: { type: "integer", minimum: 1, maximum: 10, default: 3, description: "tries per provider before falling back" },
  AUDIO_RETRY_BASE_MS: { type: "integer", minimum: 0, maximum: 60000, default: 500, description: "first backoff window (doubles per retry, full jitter)" },
  AUDIO_RETRY_MAX_MS: { type: "integer", minimum: 0, maximum: 600000, default: 20000, description: "largest backoff window" },
  AUDIO_RETRY_AFTER_CAP_MS: { type: "integer", minimum: 0, maximum: 600000, default: 30000, description: "longest Retry-After honoured" },
  AUDIO_ARTICLE_BUDGET_MS: { type: "integer", minimum: 1000, maximum: 86400000, default: 600000, description: "time after which an article's providers are not retried any more" },
  AUDIO_PROVIDER_TIMEOUT_MS: { type: "integer", minimum: 1000, maximum: 600000, default: 90000, description: "timeout of one cloud request" },
  AUDIO_ARTICLE_CONCURRENCY: { type: "integer", minimum: 1, maximum: 256, default: 32, description: "cloud requests in flight per article" },
  AUDIO_WORKER_CONCURRENCY: { type: "integer", minimum: 1, maximum: 1024, default: 64, description: "cloud requests in flight per worker process" },
  AUDIO_CHUNK_CHARS: { type: "integer", minimum: 100, maximum: 4096, description: "cap of a cloud request's text (default: the provider's limit)" },
  AUDIO_CACHE_MAX_BYTES: { type: "integer", minimum: 0, default: 536870912, description: "chunk cache size bound (0 disables the cache)" },
  AUDIO_CACHE_DIR: { type: "string", description: "chunk cache directory (default DATA_DIR/cache)" },
  DATA_DIR: { type: "string", default: "./.data", description: "embedded data directory" },
  LOCAL_ENGINES: { type: "string", pattern: "^\\s*((kokoro|pico|espeak)\\s*(,\\s*(kokoro|pico|espeak)\\s*)*)?$", emptyIsValue: true, description: "offline engines to load beside eSpeak NG, which is always there (docs/voices.md). Default kokoro,pico,espeak; under NODE_ENV=test espeak, so tests render fast unless they ask" },
  KOKORO_DIR: { type: "string", description: "directory of the Kokoro model, vocabulary and voices (default .voices/kokoro in the installation; scripts/install-voices.mjs fills it)" },
  KOKORO_THREADS: { type: "integer", minimum: 1, maximum: 16, description: "ONNX Runtime intra-op threads of the Kokoro engine (one session per process; default 2, or 1 on a single core)" },
  AUDIO_LOUDNESS_LUFS: { type: "number", minimum: LOUDNESS_RANGE.lufs.min, maximum: LOUDNESS_RANGE.lufs.max, default: -19, description: "integrated loudness of every published file (mono), LUFS; a project's `loudness.lufs` setting overrides it" },
  AUDIO_TRUE_PEAK_DBTP: { type: "number", minimum: LOUDNESS_RANGE.truePeakDbtp.min, maximum: LOUDNESS_RANGE.truePeakDbtp.max, default: -1, description: "true-peak ceiling of every published file, dBTP; a project's `loudness.truePeakDbtp` setting overrides it" },
} as const;

// Local chunks after the opening (which stays small for the preview cut). Each chunk pays an
// engine start (two processes for the native tools, an encoder set-up in WASM): at 300
// characters that doubled the native engine's time for a 20,000-character article; at 1,000 an
// article still spreads over every thread.
const LOCAL_CHUNK_CHARS = 1000;
// Kokoro pays no start per chunk (its host keeps the model and calls it a sentence at a time), and
// a listener may be hearing the chunks as they come (audio on demand, live-parts.ts): each must be
// ready before the one before it has been heard. 400 characters (~25 s of speech, ~10 s to render
// on two cores) keep the stream ahead after the opening's small chunks.
export const KOKORO_CHUNK_CHARS = 400;

export interface SpeechSetup {
  engine: SpeechEngine;
  log?: Logger;
  /** Chunks of one article at once on the local engine. */
  localConcurrency?: number;
}

export type LocalEngineChoice = "kokoro" | "pico" | "espeak";

export function parseLocalEngines(value: string): LocalEngineChoice[] {
  return parseFallback(value) as string[] as LocalEngineChoice[];
}

/**
 * The local engines a process loads: LOCAL_ENGINES, else all of them; only eSpeak under
 * NODE_ENV=test, from `env` or, for a test that hands the launcher an env of its own, the process's.
 */
export function localEnginesOf(env: Record<string, string | undefined>, configured: string | undefined): LocalEngineChoice[] {
  const test = (env.NODE_ENV ?? process.env.NODE_ENV) === "test";
  return parseLocalEngines(configured ?? (test ? "espeak" : "kokoro,pico,espeak"));
}

/**
 * An optional engine, loaded now: its provider, or undefined with one log line saying why not and
 * who reads its voices instead. A missing or broken model never stops the service.
 */
async function optionalEngine(name: string, create: () => Promise<SpeechEngine>, log: Logger | undefined): Promise<SpeechEngine | undefined> {
  const started = performance.now();
  try {
    const engine = await create();
    log?.info({ engine: engine.name, ms: Math.round(performance.now() - started) }, `${name} loaded: it reads its voices from now on`);
    return engine;
  } catch (e) {
    log?.warn({ engine: name }, `${name} not loaded (${(e as Error).message}); eSpeak NG reads its voices instead`);
    return undefined;
  }
}

export function parseFallback(value: string): ProviderName[] {
  return value
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean) as ProviderName[];
}

/** Builds the router from environment variables; throws ConfigError naming a bad variable. */
export async function speechRouterFromEnv(env: Record<string, string | undefined>, setup: SpeechSetup): Promise<SpeechRouter> {
  const cfg = loadConfig(PROVIDER_VARS, env);
  if (cfg.AZURE_SPEECH_KEY && !cfg.AZURE_SPEECH_REGION && !cfg.AZURE_SPEECH_ENDPOINT) {
    throw new ConfigError("Invalid configuration: AZURE_SPEECH_KEY needs AZURE_SPEECH_REGION or AZURE_SPEECH_ENDPOINT");
  }
  const timeoutMs = cfg.AUDIO_PROVIDER_TIMEOUT_MS;
  const openai = cfg.OPENAI_API_KEY ? createOpenAiProvider({ apiKey: cfg.OPENAI_API_KEY, baseUrl: cfg.OPENAI_BASE_URL, model: cfg.OPENAI_TTS_MODEL, timeoutMs }) : undefined;
  const azure = cfg.AZURE_SPEECH_KEY
    ? createAzureProvider({ key: cfg.AZURE_SPEECH_KEY, region: cfg.AZURE_SPEECH_REGION, endpoint: cfg.AZURE_SPEECH_ENDPOINT, timeoutMs })
    : undefined;
  const cacheDir = cfg.AUDIO_CACHE_DIR ?? path.join(cfg.DATA_DIR, "cache");
  const cache = cfg.AUDIO_CACHE_MAX_BYTES > 0 ? await openDiskCache({ dir: cacheDir, maxBytes: cfg.AUDIO_CACHE_MAX_BYTES, log: setup.log }) : undefined;
  // The cached chunks' loudness meters beside them, so that a restarted worker does not decode
  // them again: ~5 KB per minute of audio against ~360 KB of MP3, so a 64th of the chunks' room
  // holds the meters of more audio than the chunks themselves. A hit does not touch the file (a
  // syscall per chunk on the render's path); a meter lost early is measured again and rewritten.
  // The most recent are loaded into memory in the background; until then they are read one by one.
  // Only cloud audio is measured: with the local engine alone there is nothing to keep.
  const meters = cache && (openai || azure) ? await openDiskCache({ dir: path.join(cacheDir, "meters"), maxBytes: Math.max(1 << 20, Math.floor(cfg.AUDIO_CACHE_MAX_BYTES / 64)), ext: ".meter", touch: false, log: setup.log }) : undefined;
  const loading = performance.now();
  void keepMetersIn(meters).then(
    (n) => n > 0 && setup.log?.info({ meters: n, ms: Math.round(performance.now() - loading) }, "loudness meters of cached chunks loaded"),
    (e) => setup.log?.warn({ err: (e as Error).message }, "loudness meters of cached chunks not loaded"),
  );
  const engines = localEnginesOf(env, cfg.LOCAL_ENGINES);
  // Loaded once per process and kept: every article of this worker shares the session.
  const kokoro = engines.includes("kokoro")
    ? await optionalEngine("Kokoro (English)", () => createKokoroEngine({ dir: cfg.KOKORO_DIR, threads: cfg.KOKORO_THREADS, log: setup.log }), setup.log)
    : undefined;
  const pico = engines.includes("pico") ? await optionalEngine("Pico (German)", () => createPicoEngine(), setup.log) : undefined;
  setup.log?.info({ openai: !!openai, azure: !!azure, kokoro: !!kokoro, pico: !!pico, fallback: cfg.AUDIO_FALLBACK, cache: cache ? cfg.AUDIO_CACHE_MAX_BYTES : 0 }, "speech providers configured");
  return createSpeechRouter({
    providers: {
      openai,
      azure,
      local: localProvider(setup.engine, LOCAL_CHUNK_CHARS),
      kokoro: kokoro && localProvider(kokoro, KOKORO_CHUNK_CHARS),
      pico: pico && localProvider(pico, LOCAL_CHUNK_CHARS),
    },
    engines: [kokoro, pico].filter((e): e is SpeechEngine => e !== undefined),
    fallback: parseFallback(cfg.AUDIO_FALLBACK),
    attempts: cfg.AUDIO_PROVIDER_ATTEMPTS,
    backoff: { baseMs: cfg.AUDIO_RETRY_BASE_MS, maxMs: cfg.AUDIO_RETRY_MAX_MS, retryAfterCapMs: cfg.AUDIO_RETRY_AFTER_CAP_MS },
    budgetMs: cfg.AUDIO_ARTICLE_BUDGET_MS,
    articleConcurrency: cfg.AUDIO_ARTICLE_CONCURRENCY,
    workerConcurrency: cfg.AUDIO_WORKER_CONCURRENCY,
    // Every thread of the engine busy with one article: all cores, not a fixed two.
    localConcurrency: setup.localConcurrency ?? setup.engine.concurrency,
    chunkChars: cfg.AUDIO_CHUNK_CHARS,
    loudness: { lufs: cfg.AUDIO_LOUDNESS_LUFS, truePeak: cfg.AUDIO_TRUE_PEAK_DBTP },
    cache,
    log: setup.log,
  });
}
