// Issue 23 benchmark: what recording the timed segments costs. A 20,000-character article is
// rendered with the local engine (WASM, through the provider router as the worker does) and
// through a fake cloud provider whose answers are real speech of the text sent (the local
// engine's, made before the clock starts, answered after 1 s + 0.1 ms per character). Printed:
// the segment step's whole time against the whole render (target: at most 5 % on the local
// engine), and on the provider path the part of it left after the last answer's last byte
// (target: at most 50 ms; each chunk is aligned as it arrives), beside the time from that byte
// to the finished render.
// Run: npx tsx bench/segments.ts
import os from "node:os";
import { createLocalEngine } from "../services/audio/engine/index.js";
import { PARAGRAPH_BREAK, renderWithProviders } from "../services/audio/pipeline.js";
import { createOpenAiProvider, createSpeechRouter, localProvider } from "../services/audio/providers/index.js";
import { FAKE_OPENAI_KEY, startFakeProviders } from "../test/support/fake-providers.js";
import { benchArticle } from "./article.js";

export interface SegmentFigures {
  chars: number;
  sentences: number;
  local: { renderMs: number; segmentsMs: number; share: number };
  provider: { afterLastByteMs: number; segmentsMs: number; requests: number };
  loadAverage: number;
  ok: boolean;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];

export async function benchSegments(chars = 20_000, runs = Number(process.env.BENCH_SEGMENT_RUNS ?? 3)): Promise<SegmentFigures> {
  const engine = await createLocalEngine({ threads: os.availableParallelism(), native: "never" });
  const load = os.loadavg()[0];
  const text = benchArticle(chars);
  const title = "Council approves the budget";
  try {
    const local = createSpeechRouter({ providers: { local: localProvider(engine) } });
    await renderWithProviders({ title: "Warm-up", text: benchArticle(3000), lang: "en-US", voice: "alloy" }, local);
    const localRuns: Array<{ renderMs: number; segmentsMs: number; sentences: number }> = [];
    for (let i = 0; i < runs; i++) {
      const started = performance.now();
      const r = await renderWithProviders({ title, text, lang: "en-US", voice: "alloy" }, local);
      localRuns.push({ renderMs: performance.now() - started, segmentsMs: r.segmentsMs.total, sentences: r.segments.reduce((n, s) => n + s.sentences.length, 0) });
    }

    // Every request's speech, made first: the fake answers it after its latency.
    const said = new Map<string, Buffer>();
    const fake = await startFakeProviders({
      openaiKey: FAKE_OPENAI_KEY,
      audio: async (t) => said.get(t) ?? (await engine.synthesize({ text: t, voice: "nova", lang: "en-US" })),
      latencyMs: (t) => 1000 + 0.1 * t.length,
    });
    const providerRuns: Array<{ afterLastByteMs: number; segmentsMs: number; requests: number }> = [];
    try {
      const cloud = createSpeechRouter({ providers: { openai: createOpenAiProvider({ apiKey: FAKE_OPENAI_KEY, baseUrl: fake.openaiBaseUrl }), local: localProvider(engine) } });
      // A first render learns the requests and their speech; the measured ones find it made.
      await renderWithProviders({ title, text, lang: "en-US", voice: "nova" }, cloud);
      for (const c of fake.calls) {
        const input = String(c.json?.input ?? "");
        if (!said.has(input)) said.set(input, await engine.synthesize({ text: input, voice: "nova", lang: "en-US" }));
      }
      for (let i = 0; i < runs; i++) {
        const before = fake.calls.length;
        const r = await renderWithProviders({ title, text, lang: "en-US", voice: "nova" }, cloud);
        const done = performance.now();
        providerRuns.push({ afterLastByteMs: done - fake.lastByteAt(), segmentsMs: r.segmentsMs.atEnd, requests: fake.calls.length - before });
      }
      if (!fake.calls.some((c) => String(c.json?.input ?? "").includes(PARAGRAPH_BREAK))) throw new Error("no request packed paragraphs: not the path measured");
    } finally {
      await fake.close();
    }
    const renderMs = median(localRuns.map((r) => r.renderMs));
    const segmentsMs = median(localRuns.map((r) => r.segmentsMs));
    const provider = { afterLastByteMs: median(providerRuns.map((r) => r.afterLastByteMs)), segmentsMs: median(providerRuns.map((r) => r.segmentsMs)), requests: providerRuns[0].requests };
    const share = segmentsMs / renderMs;
    return { chars: text.length, sentences: localRuns[0].sentences, local: { renderMs, segmentsMs, share }, provider, loadAverage: (load + os.loadavg()[0]) / 2, ok: share <= 0.05 && provider.segmentsMs <= 50 };
  } finally {
    await engine.close();
  }
}

export function formatSegments(r: SegmentFigures): string {
  return (
    `timed segments, ${r.chars} chars, ${r.sentences} sentences: local engine ${r.local.segmentsMs.toFixed(1)} ms of a ${(r.local.renderMs / 1000).toFixed(2)} s render ` +
    `(${(r.local.share * 100).toFixed(2)} %, target <= 5 %); provider path (${r.provider.requests} requests) ${r.provider.segmentsMs.toFixed(1)} ms after the last answer (target <= 50 ms) ` +
    `of ${r.provider.afterLastByteMs.toFixed(0)} ms from the last byte to the finished render ${r.ok ? "OK" : "FAIL"}; load average ${r.loadAverage.toFixed(1)}`
  );
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const r = await benchSegments();
  console.log(formatSegments(r));
  process.exitCode = r.ok ? 0 : 1;
}
