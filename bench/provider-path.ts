// Issue 4 benchmark: the provider path against a fake answering in
// 1 s + 0.1 ms per character. A 20,000-character article must be ready
// (full + preview MP3) in at most 2.5 s; the sequential sum of the same
// requests is printed beside it. Measured for long-form paragraphs (~750 characters) and for
// one-sentence paragraphs (~90), which before packing took one request each.
// Run: npx tsx bench/provider-path.ts
import { createLocalEngine } from "../services/audio/engine/index.js";
import { renderWithProviders } from "../services/audio/pipeline.js";
import { createOpenAiProvider, createSpeechRouter, localProvider } from "../services/audio/providers/index.js";
import { FAKE_OPENAI_KEY, startSlowFakeProviders } from "../test/support/fake-providers.js";
import { benchArticle } from "./article.js";

export async function benchProviderPath(chars = 20_000, sentencesPerParagraph?: number): Promise<{ ms: number; sequentialMs: number; requests: number; chars: number; paragraphs: number; ok: boolean }> {
  const engine = await createLocalEngine({ threads: 1 });
  const clip = await engine.synthesize({ text: "A short clip that every request gets back.", voice: "alloy", lang: "en-US" });
  const fake = await startSlowFakeProviders(clip);
  try {
    const speech = createSpeechRouter({
      providers: { openai: createOpenAiProvider({ apiKey: FAKE_OPENAI_KEY, baseUrl: fake.openaiBaseUrl }), local: localProvider(engine) },
    });
    const text = benchArticle(chars, sentencesPerParagraph);
    const started = performance.now();
    const r = await renderWithProviders({ title: "Council approves the budget", text, lang: "en-US", voice: "alloy" }, speech, {
      onRetry: (e) => console.error(`retry: ${e}`),
      onFallback: (e) => console.error(`fallback: ${e}`),
    });
    const ms = performance.now() - started;
    const inputs = fake.calls.map((c) => String(c.json?.input ?? ""));
    const sequentialMs = inputs.reduce((t, s) => t + 1000 + 0.1 * s.length, 0);
    if (r.chunks !== inputs.length) throw new Error(`expected ${r.chunks} requests, saw ${inputs.length}`);
    return { ms, sequentialMs, requests: inputs.length, chars: text.length, paragraphs: text.split(/\n\n/).length, ok: ms <= 2500 };
  } finally {
    await fake.close();
    await engine.close();
  }
}

export type ProviderPathFigures = Awaited<ReturnType<typeof benchProviderPath>>;

/** The two article shapes the benchmark measures: long paragraphs, and one sentence per paragraph. */
export const PROVIDER_PATH_SHAPES = [
  ["long paragraphs", undefined],
  ["one-sentence paragraphs", 1],
] as const;

export function formatProviderPath(r: ProviderPathFigures, shape: string): string {
  return (
    `provider path, ${r.chars} chars in ${r.paragraphs} ${shape}, ${r.requests} requests: ready in ${(r.ms / 1000).toFixed(2)} s ` +
    `(target <= 2.5 s) vs sequential sum ${(r.sequentialMs / 1000).toFixed(1)} s, ` +
    `${(r.sequentialMs / r.ms).toFixed(1)}x faster ${r.ok ? "OK" : "FAIL"}`
  );
}

if (import.meta.url === `file://${process.argv[1]}`) {
  let ok = true;
  for (const [shape, perParagraph] of PROVIDER_PATH_SHAPES) {
    const r = await benchProviderPath(20_000, perParagraph);
    ok &&= r.ok;
    console.log(formatProviderPath(r, shape));
  }
  process.exitCode = ok ? 0 : 1;
}
