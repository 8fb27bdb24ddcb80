// Issue 4 benchmark: the provider path against a fake answering in
// 1 s + 0.1 ms per character. A 20,000-character article must be ready
// (full + preview MP3) in at most 2.5 s; the sequential sum of the same
// requests is printed beside it.  Run: npx tsx bench/provider-path.ts
import { createLocalEngine } from "../services/audio/engine/index.js";
import { renderWithProviders } from "../services/audio/pipeline.js";
import { createOpenAiProvider, createSpeechRouter, localProvider } from "../services/audio/providers/index.js";
import { FAKE_OPENAI_KEY, startSlowFakeProviders } from "../test/support/fake-providers.js";

const SENTENCES = [
  "The city council approved the new budget on Tuesday after a debate that lasted well into the night.",
  "Dr. Alvarez, who chairs the finance committee, said the plan would cost about 3.5 million dollars over five years.",
  "Critics argued that the money should go to schools first, while supporters pointed to the state of the roads.",
  "The mayor is expected to sign it next week, and the first projects could start in the spring.",
  "Residents who spoke at the meeting asked for more bus routes and longer library hours.",
  "A second vote on the harbour project was postponed until the auditors finish their report.",
];

/** About `chars` characters in long-form paragraphs of seven or eight sentences (~750 characters). */
function article(chars: number): string {
  const paras: string[] = [];
  let total = 0;
  for (let p = 0; total < chars; p++) {
    const n = 7 + (p % 2);
    let para = Array.from({ length: n }, (_, i) => SENTENCES[(p + i) % SENTENCES.length]).join(" ");
    if (total + para.length > chars) para = para.slice(0, Math.max(1, chars - total)).replace(/\s+\S*$/, ".");
    paras.push(para);
    total += para.length + 2;
  }
  return paras.join("\n\n");
}

export async function benchProviderPath(chars = 20_000): Promise<{ ms: number; sequentialMs: number; requests: number; chars: number; ok: boolean }> {
  const engine = await createLocalEngine({ threads: 1 });
  const clip = await engine.synthesize({ text: "A short clip that every request gets back.", voice: "alloy", lang: "en-US" });
  const fake = await startSlowFakeProviders(clip);
  try {
    const speech = createSpeechRouter({
      providers: { openai: createOpenAiProvider({ apiKey: FAKE_OPENAI_KEY, baseUrl: fake.openaiBaseUrl }), local: localProvider(engine) },
    });
    const text = article(chars);
    const started = performance.now();
    const r = await renderWithProviders({ title: "Council approves the budget", text, lang: "en-US", voice: "alloy" }, speech, {
      onRetry: (e) => console.error(`retry: ${e}`),
      onFallback: (e) => console.error(`fallback: ${e}`),
    });
    const ms = performance.now() - started;
    const inputs = fake.calls.map((c) => String(c.json?.input ?? ""));
    const sequentialMs = inputs.reduce((t, s) => t + 1000 + 0.1 * s.length, 0);
    if (r.chunks !== inputs.length) throw new Error(`expected ${r.chunks} requests, saw ${inputs.length}`);
    return { ms, sequentialMs, requests: inputs.length, chars: text.length, ok: ms <= 2500 };
  } finally {
    await fake.close();
    await engine.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const r = await benchProviderPath();
  console.log(
    `provider path, ${r.chars} chars, ${r.requests} requests: ready in ${(r.ms / 1000).toFixed(2)} s ` +
      `(target <= 2.5 s) vs sequential sum ${(r.sequentialMs / 1000).toFixed(1)} s, ` +
      `${(r.sequentialMs / r.ms).toFixed(1)}x faster ${r.ok ? "OK" : "FAIL"}`,
  );
  process.exitCode = r.ok ? 0 : 1;
}
