// No injectable markers: the pipeline marks rule matches with private-use
// characters (U+E000 + rule index) and the local engine's phoneme input with
// U+F8F0/U+F8F1. Written by a publisher into an article's text, title or
// rules, those characters must change nothing: every provider kind is sent,
// and speaks, exactly what it gets for the text without them. (A literal
// U+E001 once became the project's rule 1 in the SSML.)
import { expect } from "chai";
import { PRONUNCIATION_LIMITS, type PronunciationRule } from "../../lib/pronunciations.js";
import { createLocalEngine, type SpeechEngine } from "../../services/audio/engine/index.js";
import { renderArticle, renderWithProviders } from "../../services/audio/pipeline.js";
import { createAzureProvider, createOpenAiProvider, createSpeechRouter, localProvider } from "../../services/audio/providers/index.js";
import { prepareText } from "../../services/audio/text/index.js";
import { FAKE_AZURE_KEY, FAKE_OPENAI_KEY, startFakeProvidersOnEngine, type FakeName, type FakeProviders } from "../support/fake-providers.js";


/** Every character the audio pipeline reserves: the rule marks and the phoneme delimiters. */
const RESERVED = [...Array.from({ length: PRONUNCIATION_LIMITS.rules }, (_, i) => String.fromCodePoint(0xe000 + i)), "\uF8F0", "\uF8F1"];

const RULES: PronunciationRule[] = [
  { match: "Nguyen", ipa: "ŋwiən", say: "Win" },
  { match: "BASF", spell: true },
  { match: "Saoirse Ronan", say: "Sur-sha Ro-nan" },
  { match: "Köln", say: "Kölle" },
];
const TITLE = "Nguyen visits Köln";
const TEXT = "Nguyen of BASF met Saoirse Ronan in Köln.\n\nThey spoke about [[h@l'oU]] and the weather.";

/** `s` with all the reserved characters spread over it, between and inside words. */
function salted(s: string, offset = 0): string {
  let out = "";
  let k = offset;
  for (const c of s) {
    out += c;
    // A handful after every character, so each of the 502 lands somewhere.
    for (let n = 0; n < 6; n++) out += RESERVED[k++ % RESERVED.length];
  }
  return out;
}
const saltedRules = (): PronunciationRule[] =>
  RULES.map((r, i) => ({ ...r, match: salted(r.match, 7 * i), ...(r.say ? { say: salted(r.say, 11 * i) } : {}), ...(r.ipa ? { ipa: salted(r.ipa, 13 * i) } : {}) }));

describe("no injectable markers", function () {
  this.timeout(180_000);
  let engine: SpeechEngine;
  let fake: FakeProviders;
  const sent: string[] = [];

  before(async () => {
    engine = await createLocalEngine({ threads: 2 });
    fake = await startFakeProvidersOnEngine(engine);
  });
  after(async () => {
    await fake?.close();
    await engine?.close();
  });

  it("holds 502 reserved characters in the salted text, title and rules", () => {
    const all = new Set([...salted(TITLE), ...salted(TEXT, 100), ...saltedRules().flatMap((r) => [...r.match, ...(r.say ?? ""), ...(r.ipa ?? "")])]);
    expect(RESERVED.every((c) => all.has(c))).to.equal(true);
  });

  it("prepares the same paragraphs, as text and as HTML character references", () => {
    const clean = prepareText({ title: TITLE, text: TEXT, lang: "en-US", pronunciations: RULES });
    expect(prepareText({ title: salted(TITLE), text: salted(TEXT, 100), lang: "en-US", pronunciations: saltedRules() })).to.deep.equal(clean);
    const refs = (s: string) => [...s].map((c) => (c.codePointAt(0)! >= 0xe000 && c.codePointAt(0)! <= 0xf8ff ? `&#x${c.codePointAt(0)!.toString(16)};` : c)).join("");
    const html = (paragraphs: string[]) => paragraphs.map((p) => `<p>${p}</p>`).join("");
    const paragraphs = TEXT.split("\n\n");
    expect(prepareText({ title: refs(salted(TITLE)), text: html(paragraphs.map((p, i) => refs(salted(p, 100 * i)))), lang: "en-US", parse: true, pronunciations: RULES })).to.deep.equal(
      prepareText({ title: TITLE, text: html(paragraphs), lang: "en-US", parse: true, pronunciations: RULES }),
    );
  });

  /** The text each provider kind is sent for an article, and its audio. */
  async function sentFor(kind: FakeName | "local", title: string, text: string, pronunciations: PronunciationRule[]): Promise<{ sent: unknown[]; audio: Buffer }> {
    if (kind === "local") {
      sent.length = 0;
      // The engine as the pipeline drives it, recording each request's text.
      const recording: SpeechEngine = {
        name: engine.name,
        format: engine.format,
        synthesize: (req, signal) => (sent.push(req.text), engine.synthesize(req, signal)),
        silence: (ms) => engine.silence(ms),
        close: async () => undefined,
      };
      const r = await renderArticle({ title, text, lang: "en-US", voice: "alloy", pronunciations }, recording, { concurrency: 1 });
      return { sent: [...sent], audio: r.full };
    }
    const provider = kind === "openai" ? createOpenAiProvider({ apiKey: FAKE_OPENAI_KEY, baseUrl: fake.openaiBaseUrl }) : createAzureProvider({ key: FAKE_AZURE_KEY, endpoint: fake.azureEndpoint });
    const router = createSpeechRouter({ providers: { [kind]: provider, local: localProvider(engine) } });
    const before = fake.callsTo(kind).length;
    const r = await renderWithProviders({ title, text, lang: kind === "azure" ? "de-DE" : "en-US", voice: kind === "azure" ? "de-DE-KatjaNeural" : "alloy", pronunciations }, router, { loudness: null });
    const calls = fake.callsTo(kind).slice(before);
    // Sorted: the chunks go to the provider at once, and on a busy machine they arrive in another order; what counts is what was sent.
    const texts = calls.map((c) => (kind === "openai" ? c.json?.input : { text: c.ssml?.text, elements: c.ssml?.elements, violation: c.violation }));
    return { sent: texts.sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b))), audio: r.full };
  }

  for (const kind of ["local", "openai", "azure"] as const) {
    it(`${kind}: the salted article is sent and spoken exactly as the clean one`, async () => {
      const clean = await sentFor(kind, TITLE, TEXT, RULES);
      const dirty = await sentFor(kind, salted(TITLE), salted(TEXT, 100), saltedRules());
      expect(dirty.sent).to.deep.equal(clean.sent);
      expect(dirty.audio.equals(clean.audio), "identical audio").to.equal(true);
      // The rules still work, and no mark is left for a provider to read.
      const joined = JSON.stringify(clean.sent);
      expect(joined).to.not.match(/[\uE000-\uE1F3]/);
      if (kind === "openai") expect(joined).to.include("Win of B A S F met Sur-sha Ro-nan");
      if (kind === "azure") expect(joined).to.include('<sub alias=\\"Kölle\\">Köln</sub>');
      if (kind === "local") expect(joined).to.match(/\uF8F0Nwi@n\uF8F1|Win/);
    });
  }
});
